// Soaks: every configuration of a matrix, several times, as test:jepsen runs, with
// an expected verdict per configuration, a summary across the runs, and what
// changed since the previous soak of the same matrix. `runSoak` runs one (or,
// with a shard, its share of the runs: `plannedPairs` says which); `mergeSoaks`
// makes the shards' directories one soak; `summarizeSoak` rebuilds the summary
// of one that was killed; the matrix functions load, validate and select
// configurations (the CLI and the workflow test share them).
export { runSoak, withMetricsPort, type SoakOptions } from "./soak.ts";
export { summarizeSoak } from "./recover.ts";
export { mergeSoaks } from "./merge.ts";
export { parseShard, plannedPairs, shardText, MAX_SHARDS, type Shard } from "./plan.ts";
export { loadPreset, loadMatrixFile, parseMatrix, presetNames, selectConfigurations, runSeed, testOf, argvOf, describeExpectation, type Matrix, type Configuration, type Expectation } from "./matrix.ts";
export { renderTable } from "./table.ts";
export { renderSummaryHtml } from "./page.ts";
export { readSummary } from "./finish.ts";
export { SOAKS_DIR, SOAK_FILES, listSoaks, readPlan, readRecords, type RunRecord, type SoakPlan } from "./records.ts";
export { compareSummaries, noiseOf } from "./compare.ts";
export { summarize, exitCodeOf, type SoakSummary, type ConfigSummary, type Change } from "./summary.ts";
