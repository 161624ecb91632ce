// What a scenario is: one row of the failure catalogue (docs/experiments.md) as a
// test:jepsen configuration plus a script of chosen faults at chosen moments,
// and what the catalogue says the checker must then find. Everything a run
// varies (which client pauses, which node's clock jumps, when) is fixed here, so
// the same scenario gives the same verdict every time.
import type { OptionValue, ParsedOptions } from "../lib/index.ts";
import type { ScriptStep } from "../nemesis/index.ts";

export interface Prediction {
  /** Anomaly types the checker must find; empty: the run must be valid; null: the catalogue makes no firm call for these options. */
  anomalies: string[] | null;
  /** Why, in a sentence. */
  why: string;
}

export interface Scenario {
  /** The catalogue's id: K1, T1, F2, ... */
  id: string;
  title: string;
  /** What it shows and why, in one line (npm run scenario -- --list). */
  shows: string;
  /** The test:jepsen options it runs with, by option name (parsed values). */
  options: Record<string, OptionValue>;
  /** Options a user may set on top, each with what setting it shows; every other option is fixed. */
  varies: Record<string, string>;
  /** The faults, at fixed offsets from the clients' start, for the final options (absent or empty: the clients' own options make the scenario). */
  script?(o: ParsedOptions): ScriptStep[];
  /** Adjusts the final options to what the user set (e.g. a longer run for a longer restart delay). */
  fit?(o: ParsedOptions): void;
  /** What the catalogue predicts for the final options. */
  predict(o: ParsedOptions): Prediction;
}

/** A scenario's faults for these options: none when it has no script. */
export const scriptOf = (s: Scenario, o: ParsedOptions): ScriptStep[] => s.script?.(o) ?? [];

/** Every scenario takes these as test:jepsen does: they move no fault and no client. */
export const FREE_OPTIONS: Record<string, string> = {
  store: "where the run is stored",
  seed: "the seed of the clients' retry delays (the scenario's moments do not depend on it)",
  "port-base": "the ports its servers take",
  "metrics-port": "where the run serves its Prometheus metrics (see fencecheck test --metrics-port)",
  toxiproxy: "a Toxiproxy of your own for the links",
  deploy: "where its servers run: local processes or containers",
};

/** A late write's prediction: refused with fencing (valid), accepted without (`late` names it: "client 0's write"). */
export const staleUnlessFenced = (o: ParsedOptions, late: string, fence = "its fence is lower than the next holder's"): Prediction =>
  o.fence
    ? { anomalies: [], why: `the resource refuses ${late} (${fence}): the run is valid` }
    : { anomalies: ["stale-write-accepted"], why: `without fencing the resource takes ${late} after the next holder's: stale-write-accepted` };

/**
 * Options every single-hold scenario shares: one hold per client (an arrival
 * rate so low that a second one almost never falls inside the run), one key,
 * one write, no renews, and a fixed seed so a run repeats exactly.
 */
export const ONE_HOLD_EACH: Record<string, OptionValue> = {
  rate: 0.01,
  keys: 1,
  "writes-per-hold": 1,
  renew: false,
  seed: 1,
};

/**
 * The lock kinds' scenarios count on their seed's draws (a hold's depth, an rw
 * acquire's mode, which waits are withdrawn and when): for another seed, no call.
 */
/**
 * K1's moments, on any backend: two clients, each in a worker of its own, on a
 * 1 s lease. Client 0 holds from 0 ms, stops for 2.5 s (a GC pause) and writes
 * at 2500 ms; client 1 waits from 300 ms, takes the lock when the lease ends
 * (1000 ms) and writes at once.
 */
export const FROZEN_PAST_LEASE: Record<string, OptionValue> = {
  ...ONE_HOLD_EACH,
  concurrency: 2,
  workers: 2,
  ttl: 1000,
  pause: 2500,
  "pause-clients": ["0"],
  "pause-at": "acquire",
  work: 0,
  stagger: 300,
  "acquire-timeout": 3000,
  "time-limit": 1,
  fence: false,
};

export const otherSeed = (o: ParsedOptions, seed: number): Prediction | null =>
  o.seed === seed ? null : { anomalies: null, why: `the holds' depths, modes and withdrawals are drawn from the seed; the scenario's moments are seed ${seed}'s` };

/** A link's name in scripts and events. */
export const link = (worker: number, server: string): string => `worker-${worker}->${server}`;

/** The links from one worker to each of these servers (a partition that cuts exactly them). */
export const cut = (worker: number, servers: readonly string[]): string[] => servers.map((name) => link(worker, name));

/** Whether the checker found what the catalogue predicts: every predicted type, and valid exactly when none is predicted (null: no call to check). */
export function matches(predicted: string[] | null, found: { valid: boolean | "unknown"; anomaly_types: string[] }): boolean | null {
  if (predicted === null) return null;
  if (predicted.length === 0) return found.valid === true;
  return found.valid === false && predicted.every((a) => found.anomaly_types.includes(a));
}
