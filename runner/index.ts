// A run from options to verdict: the options of test:jepsen and the Test they
// build (options.ts), the checks before anything starts (preflight.ts; the soak
// checks and reserves its --metrics-port once with metrics.ts's), and the run itself (run.ts):
// start its parts, run the workload under the nemeses, heal, tear down, record.
// The commands, the scenarios and the soak use it here.
export { TEST_OPTIONS, buildTest, aimOf, type TestOptions, type TestOptionSpec } from "./options.ts";
export { preflight } from "./preflight.ts";
export { checkMetricsPort, takeMetricsPorts } from "./metrics.ts";
export { runTest, type RunOutcome } from "./run.ts";
export { requirementsOf, ensureFor } from "./needs.ts";
export type { Test } from "../core/index.ts";
/** --otel: where in its run directory a run's collector writes the spans. */
export { SPANS_FILE } from "./start-parts.ts";
