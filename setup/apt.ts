// Installing Debian packages: apt-get as root, or through sudo without a
// password; otherwise nothing is installed and the exact command is said. One
// install at a time on the machine (runs and test files may each ask at the same
// moment), apt's own output in a log file, and what it added read from dpkg
// before and after, so a person sees the list and the time it took.
import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, openSync, closeSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { withDirLock } from "../lib/dir-lock.ts";
import { cacheDirectory } from "../lib/user-dir.ts";

export interface Installed {
  /** Every package dpkg did not have before, dependencies included. */
  added: string[];
  seconds: number;
}

/** How root's commands are run here: directly, through `sudo -n`, or not at all. */
export function rootCommand(): string[] | null {
  if (process.getuid?.() === 0) return [];
  const sudo = spawnSync("sudo", ["-n", "true"], { stdio: "ignore" });
  return sudo.status === 0 ? ["sudo", "-n"] : null;
}

export const hasApt = (): boolean => spawnSync("apt-get", ["--version"], { stdio: "ignore" }).status === 0;

/** The command a person would type to install `packages`. */
export const installCommand = (packages: readonly string[]): string => `sudo apt-get install -y ${packages.join(" ")}`;

function dpkgPackages(): Set<string> {
  const r = spawnSync("dpkg-query", ["-W", "-f=${Package} ${db:Status-Abbrev}\\n"], { encoding: "utf8" });
  return new Set(
    (r.stdout ?? "")
      .split("\n")
      .filter((l) => /\sii\s*$/.test(l))
      .map((l) => l.split(" ")[0]),
  );
}

function run(argv: string[], log: string): Promise<number> {
  const fd = openSync(log, "a");
  try {
    const child = spawn(argv[0], argv.slice(1), { stdio: ["ignore", fd, fd], env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" } });
    return new Promise((resolve) => {
      child.on("error", () => resolve(127));
      child.on("exit", (code) => resolve(code ?? 1));
    });
  } finally {
    closeSync(fd);
  }
}

export class InstallFailed extends Error {}

/**
 * Installs `packages` with apt-get and resolves with what was added. `stillNeeded`
 * is asked again once the lock is held: another process may have installed them
 * meanwhile. Throws InstallFailed with the end of apt's log.
 */
export async function aptInstall(packages: readonly string[], opts: { root: string[]; say(line: string): void; stillNeeded(): readonly string[] }): Promise<Installed> {
  const logDir = cacheDirectory();
  mkdirSync(logDir, { recursive: true });
  const log = join(logDir, "apt.log");
  // An install takes minutes at most; a lock much older is an installer that died.
  const lock = join(tmpdir(), "fencecheck-apt.lock");
  return withDirLock(
    lock,
    { staleMs: 20 * 60_000, waiting: () => opts.say("fencecheck: waiting for another fencecheck install to finish") },
    async () => {
      const wanted = opts.stillNeeded();
      if (wanted.length === 0) return { added: [], seconds: 0 };
      const started = performance.now();
      const before = dpkgPackages();
      // Wait for a dpkg lock rather than fail: another apt may be running.
      const apt = [...opts.root, "apt-get", "-o", "DPkg::Lock::Timeout=300", "-qq"];
      if ((await run([...apt, "update"], log)) !== 0) throw new InstallFailed(`apt-get update failed:\n${tail(log)}`);
      if ((await run([...apt, "install", "-y", ...wanted], log)) !== 0) throw new InstallFailed(`apt-get install ${wanted.join(" ")} failed:\n${tail(log)}`);
      const after = dpkgPackages();
      return { added: [...after].filter((p) => !before.has(p)).sort(), seconds: (performance.now() - started) / 1000 };
    },
  );
}

function tail(log: string): string {
  try {
    return readFileSync(log, "utf8").trimEnd().split("\n").slice(-8).join("\n") + `\n(all of apt's output: ${log})`;
  } catch {
    return `(no log at ${log})`;
  }
}
