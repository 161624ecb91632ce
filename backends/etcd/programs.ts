// etcd's program, where Debian puts it and how a user names another, its
// container, its version for run.json, and what a run installs for it; the
// reference adapter programs' Python and Go environments too.
import type { ServerProgram } from "../../cluster/deployment.ts";
import { findProgram } from "../../cluster/programs.ts";
import type { VersionProbe } from "../../core/index.ts";
import { firstLine } from "../../lib/index.ts";
import { environmentRequirement } from "../../clients/program/index.ts";
import { repoFile } from "../../lib/paths.ts";
import { onPath, type Requirement } from "../../setup/requirements.ts";

export const etcdBinary = (): string => process.env.FENCECHECK_ETCD ?? "etcd";

export const ETCD_SERVER: ServerProgram = {
  name: "etcd",
  local: etcdBinary,
  defaultPorts: [2379, 2380],
  container: { command: "etcd", image: { name: "etcd", dockerfile: "backends/etcd/docker/Dockerfile", files: [] } },
};

export const ETCD_VERSION: VersionProbe = { file: () => findProgram(etcdBinary()), ask: () => firstLine(etcdBinary(), ["--version"]) };

export const ETCD: Requirement = { id: "etcd", serves: "--backend etcd", packages: ["etcd-server"], present: () => onPath(etcdBinary()), chosenBy: ["FENCECHECK_ETCD"] };

/** python-etcd3 from PyPI, for the reference adapter programs of --client python-etcd3 and python-etcd3-with (one requirements file, one venv). */
export const PYTHON_ETCD3: Requirement = environmentRequirement("python-etcd3", "--client python-etcd3 and python-etcd3-with", repoFile("adapters/python/python-etcd3.adapter.json"));

/** etcd's Go client/v3 concurrency.Mutex, built from adapters/go/go.mod, for the reference adapter program of --client etcd-mutex-go. */
export const ETCD_MUTEX_GO: Requirement = environmentRequirement("etcd-mutex-go", "--client etcd-mutex-go", repoFile("adapters/go/etcdmutex/etcd-mutex-go.adapter.json"));
