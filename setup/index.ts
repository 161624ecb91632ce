// What fencecheck needs from the machine, and getting it: a run installs the
// Debian packages of the parts it uses before it starts anything (ensureFor), and
// `fencecheck setup` installs those of the parts a person names. Each install
// says what it installs, why, how long it took and what apt added.
import { spawn } from "node:child_process";
import { BadInput } from "../lib/exit.ts";
import { repoFile } from "../lib/paths.ts";
import type { Test } from "../core/test-definition.ts";
import { aptInstall, hasApt, installCommand, InstallFailed, rootCommand } from "./apt.ts";
import { BACKEND_NEEDS, CLIENT_NEEDS, REQUIREMENTS, REQUIREMENT_IDS, satisfied, type RequirementId } from "./requirements.ts";
import { ensureShim } from "./shim.ts";

export { REQUIREMENTS, REQUIREMENT_IDS, BACKEND_NEEDS, CLIENT_NEEDS, satisfied, type Requirement, type RequirementId } from "./requirements.ts";

/** The parts of the machine a test uses: its backend's servers where they run here, and the extras its options name. */
export function requirementsOf(test: Test): RequirementId[] {
  const ids = new Set<RequirementId>();
  const deploy = test.serverOptions.deploy;
  const needs = BACKEND_NEEDS[test.backend.name];
  if (deploy === "local" && needs) ids.add(needs);
  if (deploy === "docker") ids.add("docker");
  // The resource's own Postgres, and pgbouncer, run here whatever --deploy says.
  if (test.resourceStore === "postgres") ids.add("postgres");
  if (test.resourceStore === "dynamodb") ids.add("dynalite");
  if (test.serverOptions.pgPooler === "pgbouncer") ids.add("pgbouncer");
  if (deploy === "local" && test.serverOptions.skewableClocks) ids.add("clock");
  // The workers run here whatever --deploy says.
  if (test.workerClocks) ids.add("clock");
  // The language and library of a reference adapter program, wherever the servers run.
  if (CLIENT_NEEDS[test.client]) ids.add(CLIENT_NEEDS[test.client]);
  return REQUIREMENT_IDS.filter((id) => ids.has(id));
}

export interface EnsureOptions {
  /** Progress lines (stderr for a command). */
  say?: (line: string) => void;
  /** Parts whose failure is a warning, not an error (those `fencecheck setup` was not asked for by name). */
  soft?: ReadonlySet<RequirementId>;
}

/** What ensure did, part by part, for `fencecheck setup` to sum up. */
export interface EnsureReport {
  installed: string[];
  seconds: number;
  warnings: string[];
}

const defaultSay = (line: string): void => void process.stderr.write(`${line}\n`);

/**
 * Makes every part in `ids` present, installing what is missing. Throws BadInput
 * (nothing started, nothing changed) when a part cannot be had here: no root and
 * no passwordless sudo, no apt-get, or apt failing; the message names the part,
 * what it serves and the command that would install it.
 */
export async function ensure(ids: readonly RequirementId[], opts: EnsureOptions = {}): Promise<EnsureReport> {
  const say = opts.say ?? defaultSay;
  const report: EnsureReport = { installed: [], seconds: 0, warnings: [] };
  const fail = (id: RequirementId, message: string): void => {
    if (opts.soft?.has(id)) report.warnings.push(message);
    else throw new BadInput(message);
  };
  for (const id of ids) {
    const r = REQUIREMENTS[id];
    if (r.getIt && !satisfied(r)) fail(id, `fencecheck needs ${id} (${r.serves}), which is missing: ${r.getIt}`);
  }
  const missing = ids.filter((id) => REQUIREMENTS[id].packages.length > 0 && !satisfied(REQUIREMENTS[id]));
  // What must be had goes in one apt-get call; a part allowed to fail goes in one
  // of its own, so that apt refusing it (no postgresql-15 on Ubuntu) takes nothing else with it.
  const groups = [missing.filter((id) => !opts.soft?.has(id)), ...missing.filter((id) => opts.soft?.has(id)).map((id) => [id])];
  for (const group of groups.filter((g) => g.length > 0)) {
    const packages = [...new Set(group.flatMap((id) => REQUIREMENTS[id].packages))];
    const why = group.map((id) => `${id}: ${REQUIREMENTS[id].serves}`).join("; ");
    const root = hasApt() ? rootCommand() : null;
    if (root === null) {
      const how = hasApt() ? `install them as root: ${installCommand(packages)}` : "this machine has no apt-get to install them with";
      for (const id of group) fail(id, `fencecheck needs the Debian packages ${packages.join(" ")} (${why}); ${how}`);
      continue;
    }
    say(`fencecheck: installing ${packages.join(" ")} with apt-get (${why})`);
    try {
      const done = await aptInstall(packages, {
        root,
        say,
        stillNeeded: () => [...new Set(group.filter((id) => !satisfied(REQUIREMENTS[id])).flatMap((id) => REQUIREMENTS[id].packages))],
      });
      report.installed.push(...done.added);
      report.seconds += done.seconds;
      say(`fencecheck: installed in ${done.seconds.toFixed(1)} s: ${done.added.length ? done.added.join(" ") : "nothing new (another process had installed them)"}`);
    } catch (err) {
      if (!(err instanceof InstallFailed)) throw err;
      for (const id of group) fail(id, `installing ${packages.join(" ")} (${why}) failed: ${err.message}`);
      continue;
    }
    for (const id of group) if (!satisfied(REQUIREMENTS[id])) fail(id, `${id} is still missing after apt-get installed ${REQUIREMENTS[id].packages.join(" ")}`);
  }
  if (ids.includes("clock") && REQUIREMENTS.clock.present()) {
    try {
      const shim = ensureShim();
      if (shim.built) say(`fencecheck: built the faketime shim ${shim.path}`);
    } catch (err) {
      fail("clock", `--nemesis clock cannot run: ${(err as Error).message}`);
    }
  }
  if (ids.includes("docker")) {
    const started = performance.now();
    const code = await setUpDocker();
    if (code !== 0) fail("docker", `setting up a container engine failed (scripts/setup-docker.sh exited ${code}; its messages are above); retry with: fencecheck setup --extras docker`);
    else report.seconds += (performance.now() - started) / 1000;
  }
  return report;
}

/** Everything `tests` use, installed once (a soak asks for all its configurations' at the start). */
export async function ensureFor(tests: Test | readonly Test[], say?: (line: string) => void): Promise<EnsureReport> {
  const ids = new Set((Array.isArray(tests) ? tests : [tests as Test]).flatMap((t) => requirementsOf(t)));
  return ensure(REQUIREMENT_IDS.filter((id) => ids.has(id)), { say });
}

/**
 * A container engine with Docker's API: scripts/setup-docker.sh keeps one that
 * answers, or installs and starts Podman with a base image made by debootstrap
 * (no registry is reachable). It returns at once when all is there.
 */
function setUpDocker(): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn("bash", [repoFile("scripts/setup-docker.sh")], { stdio: ["ignore", 2, 2] });
    child.on("error", () => resolve(127));
    child.on("exit", (code) => resolve(code ?? 1));
  });
}
