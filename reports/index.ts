// What a person sees of a run: the summary printed when it ends, and report.html in
// its run directory. The checker's `results.json` says what is wrong; these render
// it next to the history that proves it. The pairing of events into operations and
// holds (ops.ts) and of nemesis events into fault windows (faults.ts) is shared.
import { rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { RUN_FILES } from "../store/events.ts";
import type { ReportInput } from "./model.ts";
import { renderReportHtml } from "./page.ts";

export { renderSummary } from "./summary.ts";
export { renderReportHtml };
export type { ReportInput };
export { pairOps, holdsOf, decisionsOfWrites, ordered, type Op, type Hold, type Pairing } from "./ops.ts";
export { faultWindows, faultKind, type FaultWindow } from "./faults.ts";

/** Writes `<runDir>/report.html`, replacing any earlier one only once complete. */
export async function writeReport(runDir: string, input: ReportInput): Promise<void> {
  const path = join(runDir, RUN_FILES.report);
  const partial = `${path}.${process.pid}.tmp`;
  await writeFile(partial, renderReportHtml(input), "utf8");
  await rename(partial, path);
}
