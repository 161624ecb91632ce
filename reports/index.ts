// What a person sees of a run: the summary printed when it ends, and report.html in
// its run directory. The checker's `results.json` says what is wrong; these render
// it next to the history that proves it. The pairing of events into operations and
// holds (ops.ts) and of nemesis events into fault windows (faults.ts) is shared.
// `reportRun` reads the run directory itself: whole for a small run, in two
// streaming passes past FULL_REPORT_EVENTS (digest.ts, windows.ts, digest-page.ts),
// so a soak run's report fits in bounded memory; given what the checker's pass kept
// (checked.ts), the first of those passes is not needed.
import { rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { CheckedRun } from "../checker/index.ts";
import { RUN_FILES, type HistoryHeader, type Results } from "../store/events.ts";
import { readHistory, readResourceLog } from "../store/reader.ts";
import { readProcessMap } from "../store/process-map.ts";
import { digestOfCheck } from "./checked.ts";
import { CHECKPOINT_EVERY, digestRun, locate } from "./digest.ts";
import { renderDigestHtml } from "./digest-page.ts";
import { faultWindows } from "./faults.ts";
import type { ReportInput } from "./page-data.ts";
import { renderReportHtml } from "./page.ts";
import { readFigures, reportGroups } from "./results.ts";
import { planWindows, readWindows, WINDOW_EVENTS } from "./windows.ts";

export { renderSummary } from "./summary.ts";
export { protocolErrorsLine } from "./results.ts";
export { renderReportHtml };
export type { ReportInput };
export { pairOps, holdsOf, decisionsOfWrites, ordered, type Op, type Hold, type Pairing } from "./ops.ts";
export { faultWindows, faultKind, type FaultWindow } from "./faults.ts";
// For other pages of ours (a soak's summary.html): the same escaping and look.
export { esc, plain } from "./format.ts";
export { CSS as REPORT_CSS } from "./style.ts";

/** Writes `<runDir>/report.html`, replacing any earlier one only once complete. */
export async function writeReport(outDir: string, input: ReportInput): Promise<void> {
  await writePage(outDir, renderReportHtml(input));
}

async function writePage(outDir: string, html: string): Promise<void> {
  const path = join(outDir, RUN_FILES.report);
  const partial = `${path}.${process.pid}.tmp`;
  await writeFile(partial, html, "utf8");
  await rename(partial, path);
}

/** Up to this many history events a report draws every one; past it, it is downsampled. */
export const FULL_REPORT_EVENTS = 20_000;

export interface ReportOptions {
  /** Where report.html goes (default: the run directory). The page is self-contained, so it reads the same anywhere. */
  outDir?: string;
  /** Default FULL_REPORT_EVENTS. */
  fullUpTo?: number;
  /** Events drawn in full in the windows of a downsampled report; default WINDOW_EVENTS. */
  windowEvents?: number;
  /**
   * What the checker's pass kept of this run (checkRunKeeping with a checkpoint
   * every REPORT_CHECKPOINT_EVERY lines): a large run's report then reads only
   * the stretches it draws in full, instead of making a pass of its own first.
   */
  checked?: CheckedRun;
}

/** The checkpoint spacing a large run's report wants of the checker's pass (ReportOptions.checked). */
export const REPORT_CHECKPOINT_EVERY = CHECKPOINT_EVERY;

/**
 * Writes report.html for the checked run in `runDir` (after the checker has read
 * and validated its files) and returns the history's header. A run of up to
 * `fullUpTo` events is read whole and drawn as writeReport draws it; a larger one
 * in two streaming passes that keep only what the page shows (an overview per time
 * bucket and the windows around witnesses and faults), so memory stays bounded
 * whatever the length of the run; with `options.checked` the first pass is the
 * checker's own. A large history out of time order (a killed
 * run's) cannot be read by stretches and is drawn whole.
 */
export async function reportRun(runDir: string, results: Results, options: ReportOptions = {}): Promise<{ header: HistoryHeader; downsampled: boolean }> {
  const fullUpTo = options.fullUpTo ?? FULL_REPORT_EVENTS;
  const outDir = options.outDir ?? runDir;
  const known = readFigures(results.stats).events;
  const groups = reportGroups(results);
  // Which worker ran each process: the lanes are labelled with it.
  const processes = await readProcessMap(runDir);
  if (known === undefined || known > fullUpTo) {
    // Without checkpoints (none asked for, or a history out of time order) the report makes its own pass.
    const digest = options.checked?.checkpoints ? digestOfCheck(options.checked) : await digestRun(runDir);
    if (digest && digest.events > fullUpTo) {
      const located = await locate(runDir, digest, groups.flatMap((g) => g.witnesses.flatMap((w) => w.events)), groups.flatMap((g) => g.witnesses.flatMap((w) => w.seqs)));
      const faults = faultWindows(digest.nemesis, digest.t1);
      const plan = planWindows(digest, located, groups, faults, options.windowEvents);
      await readWindows(runDir, digest, plan.windows);
      await writePage(outDir, renderDigestHtml({ header: digest.header, results, digest, faults, groups, plan, processes }));
      return { header: digest.header, downsampled: true };
    }
  }
  const history = await readHistory(join(runDir, RUN_FILES.history));
  const resource = await readResourceLog(join(runDir, RUN_FILES.resource));
  await writeReport(outDir, { header: history.header, events: history.events, decisions: resource?.decisions ?? null, results, processes });
  return { header: history.header, downsampled: false };
}
