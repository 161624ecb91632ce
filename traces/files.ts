// Trace files to a run directory in one step: read every file first (bad input
// changes nothing), convert the spans, write the run. `fencecheck traces` and
// `fencecheck test --otel` (the spans its own run's collector wrote) share it.
import { readFileSync } from "node:fs";
import { basename, resolve } from "node:path";
import { BadInput } from "../lib/index.ts";
import { runStamp } from "../store/index.ts";
import { readOtlpJson, type Span } from "./otlp-json.ts";
import { traceHistory, type Gaps } from "./to-history.ts";
import { writeTraceRun } from "./run-dir.ts";

export interface TraceRun {
  runDir: string;
  /** How many spans the files held, lock spans or not. */
  spans: number;
  gaps: Gaps;
}

/** "traces-<first file's name>", the test name a trace run is stored under unless another is given. */
export const traceTestName = (firstFile: string): string => `traces-${basename(firstFile).replace(/\.[^.]*$/, "").replace(/[^A-Za-z0-9._-]/g, "_") || "spans"}`;

/** Reads `files`, writes their lock spans as a run in `store` (STORE/<test>/<timestamp>); throws BadInput naming the file and line of what is not OTLP JSON. */
export function writeTraceFiles(files: readonly string[], store: string, about: { test?: string; command: string[] }): TraceRun {
  if (files.length === 0) throw new BadInput("no trace file given (fencecheck traces --help)");
  const spans: Span[] = [];
  for (const file of files) {
    let bytes: Buffer;
    try {
      bytes = readFileSync(file);
    } catch (err) {
      throw new BadInput(`${file}: cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
    }
    spans.push(...readOtlpJson(bytes, file));
  }
  const test = about.test ?? traceTestName(files[0]);
  const stamp = runStamp();
  const history = traceHistory(spans, `${test}/${stamp}`);
  const runDir = resolve(store, test, stamp);
  writeTraceRun(runDir, history, { test, command: about.command, files: files.map((f) => resolve(f)), spans: spans.length });
  return { runDir, spans: spans.length, gaps: history.gaps };
}

/** The line that says what the trace lacked, counted, never guessed. */
export function gapsLine(spans: number, g: Gaps): string {
  const parts = [
    `${g.holds_without_release} hold(s) with no release span`,
    `${g.operations_without_acquire} operation(s) of a hold with no acquire span`,
    `${g.writes_without_decision} ok write(s) with no decision`,
    `${g.decisions_without_write} decision(s) with no write span`,
    `${g.other_spans} other span(s) ignored`,
    `${g.starts_moved_within_precision} start(s) moved within the SDK's millisecond`,
  ];
  return `  trace: ${spans} spans; ${parts.join(", ")}`;
}
