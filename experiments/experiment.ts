// What an experiment is: a named measurement with options of its own, a short
// version the tests run (--quick), and what it found as data: tables and plots
// for the page, and whatever it measured for results.json. Each experiment is
// one file that runs real servers (through test:jepsen runs, or directly) and
// returns its findings; storing and drawing them is the framework's business.
import type { Requirement } from "../setup/index.ts";
import type { OptionSpec, OptionValue, ParsedOptions } from "../lib/index.ts";

/**
 * Thrown by an experiment stopped by a signal (Ctrl-C), once it has torn down
 * what it started: the command exits 130, as test:jepsen and soak do, without
 * waiting for a lock client's call still in flight.
 */
export class Interrupted extends Error {
  constructor(readonly signal: NodeJS.Signals) {
    super(`interrupted by ${signal}`);
    this.name = "Interrupted";
  }
}

export interface Table {
  title: string;
  head: string[];
  rows: Array<Array<string | number>>;
  /** A sentence under the table: how to read it, what it leaves out. */
  note?: string;
}

export interface Series {
  name: string;
  /** [x, y] in the plot's units. */
  points: Array<[number, number]>;
}

export interface Plot {
  title: string;
  x: string;
  y: string;
  series: Series[];
  logX?: boolean;
}

export interface Findings {
  /** A few sentences: what the experiment shows, with the figures that say it. */
  summary: string[];
  tables: Table[];
  plots: Plot[];
  /** Everything measured, for results.json. */
  data: unknown;
  /** Run directories it made (test:jepsen runs), relative to the experiment's directory where possible. */
  runs: string[];
}

export interface ExperimentContext {
  options: ParsedOptions;
  quick: boolean;
  /** This experiment run's directory: histories/experiments/<name>/<timestamp>/. */
  dir: string;
  /** Where its test:jepsen runs are stored (dir/runs). */
  runStore: string;
  /** Progress, one line at a time (stderr). */
  log(line: string): void;
}

export interface Experiment {
  name: string;
  title: string;
  /** One line for --list: what it measures and why. */
  describe: string;
  options: readonly OptionSpec[];
  /** Option values --quick sets unless the user gave them: a short version the tests run. */
  quick: Record<string, OptionValue>;
  /**
   * The servers it starts itself with these options, for `fencecheck experiment`
   * to install first (setup/): the runs it makes as `fencecheck test` install their own.
   */
  starts?(options: ParsedOptions): Requirement[];
  run(ctx: ExperimentContext): Promise<Findings>;
}
