// The failure catalogue's scenarios (docs/experiments.md), on demand: each one a
// test:jepsen configuration with a script of chosen faults, and what the
// catalogue predicts the checker finds. `npm run scenario -- <id>` runs one.
// The rows here are about fencing and lock kinds on any backend; a backend's own
// rows are in its folder (backends/NAME/scenarios.ts), found through the registry.
import { K1, K2 } from "./lease.ts";
import { T1 } from "./release.ts";
import { F1, F2 } from "./fences.ts";
import { C1 } from "./counter.ts";
import { L1 } from "./renew.ts";
import { L2, E1, L3, K6, L4 } from "./libraries.ts";
import { R1, R2, S1, W1, W2 } from "./kinds.ts";
import { G1, Q1, Q2 } from "./cancel.ts";
import type { Scenario } from "../core/scenario.ts";
import { BACKEND_SCENARIOS } from "../backends/index.ts";

export type { Scenario, Prediction } from "../core/scenario.ts";
export { FREE_OPTIONS, matches, scriptOf } from "../core/scenario.ts";
export { buildScenario, commandLine, type ScenarioRun } from "./build.ts";

export const SCENARIOS: Record<string, Scenario> = Object.fromEntries([K1, K2, T1, F1, F2, C1, L1, L2, E1, L3, K6, L4, R1, R2, S1, W1, W2, Q1, Q2, G1, ...BACKEND_SCENARIOS].map((s) => [s.id, s]));

/** Each id with one line on what it shows and why (npm run scenario -- --list). */
export function listing(): string {
  const width = Math.max(...Object.keys(SCENARIOS).map((id) => id.length));
  return Object.values(SCENARIOS)
    .map((s) => `${s.id.padEnd(width)}  ${s.title}: ${s.shows}`)
    .join("\n");
}
