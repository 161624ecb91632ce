// What a part of fencecheck needs from the machine, as data: the Debian packages
// that provide it and how to tell it is already there. Each backend declares its
// own (backends/NAME/programs.ts: its servers, its adapter programs' languages);
// the parts that serve every backend are here: the clock nemesis' libfaketime,
// a container engine, GNU time and Chromium. A run asks for the parts it uses
// (runner/needs.ts), so a first run of the default Redis test installs Redis and
// nothing else; `fencecheck setup` asks for the parts named.
import { createRequire } from "node:module";
import { findLibfaketime } from "../cluster/faketime.ts";
import { findProgram } from "../cluster/programs.ts";

export interface Requirement {
  /** Its name in `fencecheck setup` and in messages: "redis", "clock". */
  id: string;
  /** What it serves, for the lines set-up prints. */
  serves: string;
  /** Debian's packages that provide it; empty for what its `finish` or npm sets up. */
  packages: readonly string[];
  /** For a part no Debian package provides: how to get it, said when it is missing. */
  getIt?: string;
  /** Whether the machine has it. */
  present(): boolean;
  /**
   * The variables by which a user names the program to run instead (another
   * Postgres, a redis-server of their own build). With one set the part counts as
   * present: nothing of Debian's would be run, and a program that is not there
   * fails the run's start naming it.
   */
  chosenBy?: readonly string[];
  /**
   * Whether a failure to install it may be only a warning when it was not asked
   * for by name (Ubuntu's apt has no postgresql-15; a machine may have no engine).
   */
  optional?: boolean;
  /** For a part fencecheck builds into its cache instead of installing (an adapter's environment): the file it is built from, for `fencecheck setup --list`. */
  builds?: string;
  /** What remains once its packages are there (a library built from source, an engine started): says what it did; throws saying what failed. */
  finish?(say: (line: string) => void): Promise<void>;
}

/** A program by name on PATH, or a path to an executable file. */
export const onPath = (program: string): boolean => findProgram(program) !== null;

/** Whether a module of ours resolves (an optional npm dependency may not be installed). */
export function resolvable(specifier: string): boolean {
  try {
    createRequire(import.meta.url).resolve(specifier);
    return true;
  } catch {
    return false;
  }
}

/** Whether the part is there, or the user named a program of their own for it. */
export function satisfied(r: Requirement, env: NodeJS.ProcessEnv = process.env): boolean {
  return (r.chosenBy ?? []).some((v) => env[v]) || r.present();
}

/** The browser scripts/screenshots.ts runs: FENCECHECK_CHROMIUM, or Debian's chromium. */
export const chromiumBinary = (): string => process.env.FENCECHECK_CHROMIUM || "chromium";
