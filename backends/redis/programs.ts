// Redis' program, where Debian puts it and how a user names another, its
// container, its version for run.json, and what a run installs for it: kept
// apart from the code that starts it, so that set-up and run.json need no
// client library. The reference adapter programs' Python environment is here too.
import type { ServerProgram } from "../../cluster/deployment.ts";
import { findProgram } from "../../cluster/programs.ts";
import type { VersionProbe } from "../../core/index.ts";
import { firstLine } from "../../lib/index.ts";
import { environmentRequirement } from "../../clients/program/index.ts";
import { repoFile } from "../../lib/paths.ts";
import { onPath, type Requirement } from "../../setup/requirements.ts";

export const redisBinary = (): string => process.env.FENCECHECK_REDIS_SERVER ?? "redis-server";

export const REDIS_SERVER: ServerProgram = {
  name: "redis",
  local: redisBinary,
  defaultPorts: [6379],
  // The image brings libfaketime and fencecheck's malloc shim, so the clock nemesis can move the server's clock.
  container: { command: "redis-server", image: { name: "redis", dockerfile: "backends/redis/docker/Dockerfile", files: ["cluster/faketime/shim.c"] } },
};

export const REDIS_VERSION: VersionProbe = { file: () => findProgram(redisBinary()), ask: () => firstLine(redisBinary(), ["--version"]) };

export const REDIS: Requirement = { id: "redis", serves: "--backend redis and redlock", packages: ["redis-server"], present: () => onPath(redisBinary()), chosenBy: ["FENCECHECK_REDIS_SERVER"] };

/** redis-py from PyPI, for the reference adapter programs of --client redis-py and redis-py-timeout-0 (one requirements file, one venv). */
export const REDIS_PY: Requirement = environmentRequirement("redis-py", "--client redis-py and redis-py-timeout-0", repoFile("adapters/python/redis-py.adapter.json"));

/** python-redis-lock from PyPI (with the redis-py it pins), for the reference adapter program of --client python-redis-lock. */
export const PYTHON_REDIS_LOCK: Requirement = environmentRequirement("python-redis-lock", "--client python-redis-lock", repoFile("adapters/python/python-redis-lock.adapter.json"));

/** bsm/redislock from the Go module proxy: adapters/go/go.mod, the one module of the Go adapters (redsync's too). */
export const BSM_REDISLOCK: Requirement = environmentRequirement("bsm-redislock", "--client bsm-redislock", repoFile("adapters/go/redislock/bsm-redislock.adapter.json"));

/** Redisson from Maven Central (adapters/java/redisson/pom.xml): it brings netty, reactor, rxjava and slf4j; the environment's build compiles RedissonLock.java against them. One environment for its four manifests. */
export const REDISSON: Requirement = environmentRequirement("redisson", "--client redisson, redisson-fenced, redisson-multilock and redisson-redlock", repoFile("adapters/java/redisson/redisson.adapter.json"));
