// MariaDB's programs, where Debian puts them and how a user names others, its
// container, its version for run.json, and what a run installs for it.
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import type { ImageSource, ServerProgram } from "../../cluster/deployment.ts";
import { findProgram } from "../../cluster/programs.ts";
import type { VersionProbe } from "../../core/index.ts";
import { firstLine } from "../../lib/index.ts";
import { onPath, type Requirement } from "../../setup/index.ts";
import { rootCommand } from "../../setup/apt.ts";

/** The server, and the script that makes a data directory (both in Debian's mariadb-server-core). */
export const mariadbd = (): string => process.env.FENCECHECK_MARIADBD ?? "/usr/sbin/mariadbd";
export const installDb = (): string => process.env.FENCECHECK_MARIADB_INSTALL_DB ?? "mariadb-install-db";

/** Debian's mariadb-server, with the script that makes a data directory and drops to the mysql user. */
const IMAGE: ImageSource = { name: "mariadb", dockerfile: "backends/mariadb/docker/Dockerfile", files: ["backends/mariadb/docker/mariadb.sh"] };

export const MARIADB_SERVER: ServerProgram = { name: "mariadbd", local: mariadbd, container: { command: "fencecheck-mariadb", image: IMAGE }, defaultPorts: [3306] };

// "/usr/sbin/mariadbd  Ver 10.11.19-MariaDB-0+deb12u1 for debian-linux-gnu on x86_64 (Debian 12)"
export const MARIADB_VERSION: VersionProbe = { file: () => findProgram(mariadbd()), ask: () => firstLine(mariadbd(), ["--version"]) };

/** Debian's own service, which the package's postinst starts on 3306 where systemd runs (a run never uses it). */
const SERVICE = "mariadb";
const SERVICE_PID = "/run/mysqld/mysqld.pid";

/** Whether this process found the server missing: then whatever service is up now, our install started. */
let foundMissing = false;

/**
 * Stops and disables the service that installing mariadb-server started
 * (systemctl disable --now where systemd runs; else SIGTERM to the pid in its
 * pid file, and mysqld_safe exits with it). Only after an install of ours: a
 * MariaDB the user had set up before is theirs, and left running. Runs use
 * ports of their own either way; this only keeps a server nobody asked for from
 * running on 3306.
 */
async function stopDebianService(say: (line: string) => void): Promise<void> {
  if (!foundMissing) return;
  foundMissing = false;
  const root = rootCommand();
  if (root === null) return say(`fencecheck: installing mariadb-server may have started its service on 3306; stop it with: sudo systemctl disable --now ${SERVICE}`);
  const run = (argv: string[]) => spawnSync(argv[0], argv.slice(1), { encoding: "utf8" });
  if (existsSync("/run/systemd/system")) {
    const r = run([...root, "systemctl", "disable", "--now", SERVICE]);
    if (r.status !== 0) throw new Error(`systemctl disable --now ${SERVICE} failed (${r.status}): ${(r.stderr ?? "").trim()}`);
    return say(`fencecheck: stopped and disabled Debian's ${SERVICE} service (port 3306), which installing mariadb-server started; runs start servers of their own`);
  }
  let pid: number;
  try {
    pid = Number(readFileSync(SERVICE_PID, "utf8").trim());
  } catch {
    return; // Not started (a policy-rc.d refused it, as in containers).
  }
  const comm = existsSync(`/proc/${pid}/comm`) ? readFileSync(`/proc/${pid}/comm`, "utf8").trim() : "";
  if (!/^(mariadbd|mysqld)$/.test(comm)) return;
  run([...root, "kill", "-TERM", String(pid)]);
  say(`fencecheck: stopped Debian's ${SERVICE} server (pid ${pid}, port 3306), which installing mariadb-server started; runs start servers of their own`);
}

export const MARIADB: Requirement = {
  id: "mariadb",
  serves: "--backend mariadb",
  // mariadb-server (not its -core alone) for the mysql user its preinst makes, whom the server runs as.
  packages: ["mariadb-server"],
  present: () => {
    const there = onPath(mariadbd()) && onPath(installDb());
    if (!there) foundMissing = true;
    return there;
  },
  chosenBy: ["FENCECHECK_MARIADBD"],
  optional: true,
  finish: stopDebianService,
};
