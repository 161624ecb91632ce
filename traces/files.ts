// Trace files to a run directory in one step: read every file first (bad input
// changes nothing), convert the spans, write the run. `fencecheck traces` and
// `fencecheck test --otel` (the spans its own run's collector wrote) share it.
import { readFileSync } from "node:fs";
import { basename, resolve } from "node:path";
import { BadInput } from "../lib/index.ts";
import { runStamp } from "../store/index.ts";
import type { ClockBounds } from "../checker/index.ts";
import { readOtlpJson, type Span } from "./otlp-json.ts";
import { traceHistory, type Gaps, type TraceHistory } from "./to-history.ts";
import { writeTraceRun } from "./run-dir.ts";

export interface TraceRun {
  runDir: string;
  /** How many spans the files held, lock spans or not. */
  spans: number;
  gaps: Gaps;
  /** Which host got which clock bound (--clock-error), for the person. */
  clocksLine: string;
}

/** "traces-<first file's name>", the test name a trace run is stored under unless another is given. */
export const traceTestName = (firstFile: string): string => `traces-${basename(firstFile).replace(/\.[^.]*$/, "").replace(/[^A-Za-z0-9._-]/g, "_") || "spans"}`;

/**
 * Reads `files`, writes their lock spans as a run in `store` (STORE/<test>/<timestamp>),
 * with each process's clock bound from `clockError` (--clock-error; "0" if absent);
 * throws BadInput naming the file and line of what is not OTLP JSON.
 */
export function writeTraceFiles(files: readonly string[], store: string, about: { test?: string; command: string[]; clockError?: string }): TraceRun {
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
  const clocks = clockBounds(about.clockError ?? "0", history.processes);
  const runDir = resolve(store, test, stamp);
  writeTraceRun(runDir, history, { test, command: about.command, files: files.map((f) => resolve(f)), spans: spans.length, clock_error: clocks.bounds });
  return { runDir, spans: spans.length, gaps: history.gaps, clocksLine: clocks.line };
}

/** The line that says what the trace lacked, counted, never guessed. */
export function gapsLine(spans: number, g: Gaps): string {
  const parts = [
    `${g.holds_without_release} hold(s) with no release span`,
    `${g.operations_without_acquire} operation(s) of a hold with no acquire span`,
    `${g.writes_without_decision} ok write(s) with no decision`,
    `${g.decisions_without_write} decision(s) with no write span`,
    `${g.decisions_missing} decision(s) missing by their order`,
    `${g.other_spans} other span(s) ignored`,
    `${g.starts_moved_within_precision} start(s) moved within the SDK's millisecond`,
  ];
  return `  trace: ${spans} spans; ${parts.join(", ")}`;
}

/**
 * --clock-error as run.json's clock_error (checker/clock.ts) for the trace's
 * processes, by their hosts, and the line that says which host got which bound.
 * A host the trace does not have is bad input: a misspelt name would otherwise
 * leave the real host on the default without a word.
 */
export function clockBounds(option: string, processes: TraceHistory["processes"]): { bounds: ClockBounds; line: string } {
  const hosts = [...new Set(Object.values(processes).map((p) => p.host))].sort();
  const byHost = new Map<string, number>();
  let fallback: number | undefined;
  const ms = (text: string, item: string): number => {
    if (!/^\d+(\.\d+)?$/.test(text.trim())) throw new BadInput(`--clock-error: ${JSON.stringify(item)}: ${JSON.stringify(text)} is not a number of ms >= 0`);
    return Number(text);
  };
  for (const item of option.split(",").map((x) => x.trim()).filter((x) => x !== "")) {
    const eq = item.lastIndexOf("=");
    if (eq < 0) {
      if (fallback !== undefined) throw new BadInput(`--clock-error: two bounds for every host (${fallback} and ${item}); give one MS and HOST=MS for the others`);
      fallback = ms(item, item);
      continue;
    }
    const host = item.slice(0, eq).trim();
    if (!hosts.includes(host)) throw new BadInput(`--clock-error: no span of the trace is from host ${JSON.stringify(host)} (its hosts: ${hosts.join(", ")})`);
    if (byHost.has(host)) throw new BadInput(`--clock-error: host ${JSON.stringify(host)} is given twice`);
    byHost.set(host, ms(item.slice(eq + 1), item));
  }
  const default_ms = fallback ?? 0;
  const by_process: Record<string, number> = {};
  for (const [p, { host }] of Object.entries(processes)) if (byHost.has(host)) by_process[p] = byHost.get(host)!;
  const said = hosts.map((h) => (byHost.has(h) ? `${h} ±${byHost.get(h)} ms` : `${h} ±${default_ms} ms (the default)`));
  return { bounds: { default_ms, by_process }, line: `  clocks: ${said.join(", ")}` };
}
