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
import { readOtlpJson, traceHistory, writeTraceRun, type Span } from "../traces/index.ts";
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
  const runDir = resolve(o.store as string, test, stamp);
  writeTraceRun(runDir, history, { test, command: ["traces", ...args], files: positional.map((f) => resolve(f)), spans: spans.length });
  const checked = await checkAndReport(runDir);
  for (const w of checked.warnings) process.stderr.write(`warning: ${w}\n`);
  process.stdout.write(`${checked.summary}\n`);
  process.stdout.write(`${gapsLine(spans.length, history.gaps)}\nRun directory: ${runDir}\n`);
  return checked.exitCode;
}

export function gapsLine(spans: number, g: ReturnType<typeof traceHistory>["gaps"]): string {
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
