// `fencecheck traces [options] <file>...`: checks a service's own lock spans, as
// OpenTelemetry exported them (OTLP JSON lines, the Collector's file exporter),
// by the rules a run is checked by. The spans become a run directory in the
// store (history.ndjson, resource.ndjson where the trace has the resource's
// decisions, run.json with what the trace lacked), so that `fencecheck check`
// checks it again exactly as it checks a run. docs/traces.md gives the
// conventions the spans must follow.
import { readFileSync } from "node:fs";
import { basename, resolve } from "node:path";
import { BadInput, EXIT, helpText, parseArgs, type OptionSpec } from "../lib/index.ts";
import { runStamp } from "../store/index.ts";
import { readOtlpJson, traceHistory, writeTraceRun, type Span, type TraceHistory } from "../traces/index.ts";
import type { ClockBounds } from "../checker/index.ts";
import { checkAndReport } from "./check-run.ts";
import { listen, LIVE_OPTIONS } from "./traces-live.ts";

const USAGE = `Usage: fencecheck traces [options] <file>...
       fencecheck traces --listen PORT [options]

Reads lock spans from OTLP JSON files (the OpenTelemetry Collector's file
exporter: one {"resourceSpans":[...]} a line), writes them as a run directory in
the store, checks it as a run is checked, and prints the verdict. The spans'
names and attributes are docs/traces.md's. What the trace lacks (holds with no
release span, writes with no decision) is counted in run.json, never guessed.
With --listen, receives OTLP over HTTP (POST /v1/traces on 127.0.0.1:PORT,
protobuf or JSON, gzip or not) and checks spans as their windows settle, until
SIGINT or SIGTERM; docs/traces.md ("Live: --listen") says how.
Exit: 0 valid, 1 invalid, 2 unknown, 254 bad input, 255 internal error.`;

const OPTIONS: readonly OptionSpec[] = [
  { name: "store", kind: "string", default: "histories", help: "directory of the run store; the run goes in STORE/traces-<first file's name>/<timestamp>" },
  {
    name: "clock-error",
    kind: "string",
    default: "0",
    help: "how far each host's wall clock may be off, in ms: MS for every host, HOST=MS for one (host.name), comma-separated, e.g. 5,db-1=50; unlisted hosts get the MS given, else 0. Findings that hold wherever the instants lie within the bounds decide the verdict; those that hold only for some placement are listed apart as possible",
  },
  ...LIVE_OPTIONS,
];

export async function main(args: string[]): Promise<number> {
  const { options: o, positional, help } = parseArgs(args, OPTIONS);
  if (help) {
    process.stdout.write(helpText(USAGE, OPTIONS));
    return EXIT.valid;
  }
  if (o.listen !== undefined) return listen(o, positional, ["traces", ...args]);
  if (positional.length === 0) throw new BadInput("no trace file given (fencecheck traces --help)");
  // Everything is read and converted before anything is written: bad input changes nothing.
  const spans: Span[] = [];
  for (const file of positional) {
    let bytes: Buffer;
    try {
      bytes = readFileSync(file);
    } catch (err) {
      throw new BadInput(`${file}: cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
    }
    spans.push(...readOtlpJson(bytes, file));
  }
  const test = `traces-${basename(positional[0]).replace(/\.[^.]*$/, "").replace(/[^A-Za-z0-9._-]/g, "_") || "spans"}`;
  const stamp = runStamp();
  const run = `${test}/${stamp}`;
  const history = traceHistory(spans, run);
  const clocks = clockBounds(o["clock-error"] as string, history.processes);
  const runDir = resolve(o.store as string, test, stamp);
  writeTraceRun(runDir, history, { test, command: ["traces", ...args], files: positional.map((f) => resolve(f)), spans: spans.length, clock_error: clocks.bounds });
  const checked = await checkAndReport(runDir);
  for (const w of checked.warnings) process.stderr.write(`warning: ${w}\n`);
  process.stdout.write(`${checked.summary}\n`);
  process.stdout.write(`${gapsLine(spans.length, history.gaps)}\n${clocks.line}\nRun directory: ${runDir}\n`);
  return checked.exitCode;
}

export function gapsLine(spans: number, g: ReturnType<typeof traceHistory>["gaps"]): string {
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
