// The lab's experiments as commands (issue 14): each one a file, run by name with
// `npm run experiment -- <name>`, stored under histories/experiments/.
import type { Experiment } from "./experiment.ts";
import { fairness } from "./fairness.ts";
import { keys } from "./keys.ts";
import { renew } from "./renew.ts";
import { contention } from "./contention.ts";
import { ttlLiveness } from "./ttl-liveness.ts";
import { fenceCounters } from "./fence-counters.ts";
import { deadSession } from "./dead-session.ts";

export type { Experiment, ExperimentContext, Findings, Plot, Series, Table } from "./experiment.ts";
export { Interrupted } from "./experiment.ts";
export { createExperimentDir, writeExperiment, EXPERIMENT_FILES } from "./store.ts";

export const EXPERIMENTS: Record<string, Experiment> = Object.fromEntries([fairness, renew, contention, ttlLiveness, keys, fenceCounters, deadSession].map((e) => [e.name, e]));

export function listing(): string {
  const width = Math.max(...Object.keys(EXPERIMENTS).map((n) => n.length));
  return Object.values(EXPERIMENTS).map((e) => `${e.name.padEnd(width)}  ${e.describe}`).join("\n");
}
