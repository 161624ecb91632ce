// What a history proves. `checkRun` reads a run directory and returns its verdict
// (results.json's content); `writeResults` stores it. `analyze` is the same
// check on a history already in memory.
export { checkRun, loadRun, writeResults, type LoadedRun } from "./run.ts";
export { analyze, MAX_WITNESSES } from "./analyze.ts";
export type { RunInput } from "./model.ts";
