// Trace files to a run directory in one step: read every file first (bad input
// changes nothing), convert the spans, write the run. `fencecheck traces` and
// `fencecheck test --otel` (the spans its own run's collector wrote) share it.
import { readFileSync } from "node:fs";
import { basename, resolve } from "node:path";
import { BadInput } from "../lib/index.ts";
import { runStamp } from "../store/index.ts";
import type { ClockBounds } from "../checker/index.ts";
import { readOtlpJson, type Span } from "./otlp-json.ts";
import { hostOf, traceHistory, type Gaps, type TraceHistory } from "./to-history.ts";
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
  // The bounds by host first: a thread's spans may overlap by a clock's step back.
  const hosts = withPrecision(parseClockError(about.clockError ?? "0", lockSpanHosts(spans)), wholeMillisecondHosts(spans));
  const history = traceHistory(spans, `${test}/${stamp}`, hosts.of);
  const clocks = clockBounds(hosts, history.processes);
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
    `${g.starts_moved_within_clock_error} within the clock bound`,
  ];
  return `  trace: ${spans} spans; ${parts.join(", ")}`;
}

/** --clock-error read against the trace's hosts: each host's bound in ms. */
export interface HostClocks {
  hosts: string[];
  byHost: Map<string, number>;
  default_ms: number;
  of: (host: string) => number;
  /** Hosts whose bound was raised to 1 ms, their spans starting on whole milliseconds. */
  precise?: Set<string>;
}

/**
 * The hosts whose client lock spans all start on a whole millisecond: their
 * SDK read the start from Date.now() (the JS SDK does), so each start, and the
 * end taken from it plus a duration, may be up to 1 ms early. Two holds of a
 * run that came within a millisecond (a release, then the next grant on a
 * polling waiter's SET) would otherwise seem to overlap by a fraction of it.
 */
export function wholeMillisecondHosts(spans: readonly Span[]): Set<string> {
  const whole = new Map<string, boolean>();
  for (const s of spans) {
    if (!s.name.startsWith("lock.") || s.name === "lock.decision") continue;
    const h = hostOf(s);
    whole.set(h, (whole.get(h) ?? true) && s.start % 1_000_000n === 0n);
  }
  return new Set([...whole].filter(([, w]) => w).map(([h]) => h));
}

/** The bounds with at least 1 ms for the hosts whose spans start on whole milliseconds. */
export function withPrecision(c: HostClocks, whole: Set<string>): HostClocks {
  if (whole.size === 0) return c;
  const of = (host: string): number => Math.max(c.of(host), whole.has(host) ? 1 : 0);
  const byHost = new Map(c.byHost);
  for (const h of whole) if (of(h) !== c.default_ms) byHost.set(h, of(h));
  return { ...c, byHost, of, precise: whole };
}

/** The hosts of the trace's lock spans (docs/traces.md: host.name, else the instance). */
function lockSpanHosts(spans: readonly Span[]): string[] {
  return [...new Set(spans.filter((s) => s.name.startsWith("lock.")).map(hostOf))].sort();
}

/**
 * --clock-error: MS for every host, HOST=MS for some. A host the trace does not
 * have is bad input: a misspelt name would otherwise leave the real host on the
 * default without a word. The live check (`hosts` null) cannot know the hosts
 * before they send: it takes every name.
 */
export function parseClockError(option: string, hosts: readonly string[] | null): HostClocks {
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
    if (hosts !== null && !hosts.includes(host)) throw new BadInput(`--clock-error: no span of the trace is from host ${JSON.stringify(host)} (its hosts: ${hosts.join(", ")})`);
    if (byHost.has(host)) throw new BadInput(`--clock-error: host ${JSON.stringify(host)} is given twice`);
    byHost.set(host, ms(item.slice(eq + 1), item));
  }
  const default_ms = fallback ?? 0;
  return { hosts: [...(hosts ?? byHost.keys())], byHost, default_ms, of: (host) => byHost.get(host) ?? default_ms };
}

/** The hosts' bounds as run.json's clock_error (checker/clock.ts) for the trace's processes, and the line that says which host got which. */
export function clockBounds(c: HostClocks, processes: TraceHistory["processes"]): { bounds: ClockBounds; line: string } {
  const by_process: Record<string, number> = {};
  for (const [p, { host }] of Object.entries(processes)) if (c.byHost.has(host)) by_process[p] = c.byHost.get(host)!;
  const why = (h: string): string => (c.precise?.has(h) && c.of(h) === 1 ? " (its spans start on whole milliseconds)" : "");
  const said = c.hosts.map((h) => (c.byHost.has(h) ? `${h} ±${c.byHost.get(h)} ms${why(h)}` : `${h} ±${c.default_ms} ms (the default)`));
  return { bounds: { default_ms: c.default_ms, by_process }, line: `  clocks: ${said.join(", ")}` };
}
