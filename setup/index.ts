// What fencecheck needs from the machine, and getting it: a run installs the
// Debian packages of the parts it uses before it starts anything
// (runner/needs.ts), and `fencecheck setup` installs those of the parts a person
// names. Each install
// says what it installs, why, how long it took and what apt added.
import { BadInput } from "../lib/exit.ts";
import { aptInstall, hasApt, installCommand, InstallFailed, rootCommand } from "./apt.ts";
import { satisfied, type Requirement } from "./requirements.ts";

export { satisfied, onPath, resolvable, chromiumBinary, type Requirement } from "./requirements.ts";
export { CLOCK, DOCKER, TOXIPROXY, OTELCOL, OTEL_SDK, GNU_TIME, CHROMIUM } from "./extras.ts";

export interface EnsureOptions {
  /** Progress lines (stderr for a command). */
  say?: (line: string) => void;
  /** Parts whose failure is a warning, not an error (those `fencecheck setup` was not asked for by name). */
  soft?: ReadonlySet<string>;
}

/** What ensure did, part by part, for `fencecheck setup` to sum up. */
export interface EnsureReport {
  installed: string[];
  seconds: number;
  warnings: string[];
}

const defaultSay = (line: string): void => void process.stderr.write(`${line}\n`);

/** A part only the user can install here (a Go, a python3 with venv, an optional npm dependency): set-up says so with 254, as for bad arguments. */
export class OnlyTheUserCanInstall extends BadInput {
  readonly onlyTheUser = true;
}

/**
 * Makes every part present, installing what is missing, then finishing it. Throws BadInput
 * (nothing started, nothing changed) when a part cannot be had here: no root and
 * no passwordless sudo, no apt-get, or apt failing; the message names the part,
 * what it serves and the command that would install it.
 */
export async function ensure(wanted: readonly Requirement[], opts: EnsureOptions = {}): Promise<EnsureReport> {
  // One of each, in the order given: several parts may need the same one.
  const parts = [...new Map(wanted.map((r) => [r.id, r])).values()];
  const say = opts.say ?? defaultSay;
  const report: EnsureReport = { installed: [], seconds: 0, warnings: [] };
  const fail = (id: string, message: string, error: BadInput = new BadInput(message)): void => {
    if (opts.soft?.has(id)) report.warnings.push(message);
    else throw error;
  };
  for (const r of parts) {
    const message = `fencecheck needs ${r.id} (${r.serves}), which is missing: ${r.getIt}`;
    if (r.getIt && !satisfied(r)) fail(r.id, message, new OnlyTheUserCanInstall(message));
  }
  const missing = parts.filter((r) => r.packages.length > 0 && !satisfied(r));
  // What must be had goes in one apt-get call; a part allowed to fail goes in one
  // of its own, so that apt refusing it (no postgresql-15 on Ubuntu) takes nothing else with it.
  const groups = [missing.filter((r) => !opts.soft?.has(r.id)), ...missing.filter((r) => opts.soft?.has(r.id)).map((r) => [r])];
  for (const group of groups.filter((g) => g.length > 0)) {
    const packages = [...new Set(group.flatMap((r) => r.packages))];
    const why = group.map((r) => `${r.id}: ${r.serves}`).join("; ");
    const root = hasApt() ? rootCommand() : null;
    if (root === null) {
      const how = hasApt() ? `install them as root: ${installCommand(packages)}` : "this machine has no apt-get to install them with";
      for (const { id } of group) fail(id, `fencecheck needs the Debian packages ${packages.join(" ")} (${why}); ${how}`);
      continue;
    }
    say(`fencecheck: installing ${packages.join(" ")} with apt-get (${why})`);
    try {
      const done = await aptInstall(packages, {
        root,
        say,
        stillNeeded: () => [...new Set(group.filter((r) => !satisfied(r)).flatMap((r) => r.packages))],
      });
      report.installed.push(...done.added);
      report.seconds += done.seconds;
      say(`fencecheck: installed in ${done.seconds.toFixed(1)} s: ${done.added.length ? done.added.join(" ") : "nothing new (another process had installed them)"}`);
    } catch (err) {
      if (!(err instanceof InstallFailed)) throw err;
      for (const { id } of group) fail(id, `installing ${packages.join(" ")} (${why}) failed: ${err.message}`);
      continue;
    }
    for (const r of group) if (!satisfied(r)) fail(r.id, `${r.id} is still missing after apt-get installed ${r.packages.join(" ")}`);
  }
  // What remains once the packages are there (a part with packages only when they are).
  // At once: they are independent (Toxiproxy's Go build, the adapters' venvs and
  // jars, the faketime shim, the container engine), and on a new machine one
  // after another they were over two minutes, mostly waiting on downloads.
  const finishing = parts.filter((r) => r.finish && !(r.packages.length > 0 && !r.present()));
  const started = performance.now();
  const outcomes = await Promise.allSettled(finishing.map(async (r) => r.finish!(say)));
  report.seconds += (performance.now() - started) / 1000;
  outcomes.forEach((o, i) => {
    if (o.status === "rejected") fail(finishing[i]!.id, (o.reason as Error).message);
  });
  return report;
}
