// `fencecheck traces [options] <file>...`: checks a service's own lock spans, as
// OpenTelemetry exported them (OTLP JSON lines, the Collector's file exporter),
// by the rules a run is checked by. The spans become a run directory in the
// store (history.ndjson, resource.ndjson where the trace has the resource's
// decisions, run.json with what the trace lacked), so that `fencecheck check`
// checks it again exactly as it checks a run. docs/traces.md gives the
// conventions the spans must follow.
import { EXIT, helpText, parseArgs, type OptionSpec } from "../lib/index.ts";
import { gapsLine, writeTraceFiles } from "../traces/index.ts";
import { checkAndReport, type CheckOutcome } from "./check-run.ts";
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
  const checked = await checkTraceFiles(positional, o.store as string, { command: ["traces", ...args], clockError: o["clock-error"] as string });
  for (const w of checked.warnings) process.stderr.write(`warning: ${w}\n`);
  process.stdout.write(`${checked.summary}\n`);
  process.stdout.write(`${checked.gaps}\n${checked.clocks}\nRun directory: ${checked.runDir}\n`);
  return checked.exitCode;
}

/**
 * The trace check: `files` written as a run in `store` (STORE/<test>/<timestamp>,
 * traces-<first file's name> unless `test` is given) and checked as a run is,
 * with its report; `gaps` is the line that says what the trace lacked, `clocks`
 * the one that says which host got which clock bound.
 */
export async function checkTraceFiles(
  files: readonly string[],
  store: string,
  about: { test?: string; command: string[]; clockError?: string },
): Promise<CheckOutcome & { runDir: string; gaps: string; clocks: string }> {
  const run = writeTraceFiles(files, store, about);
  const checked = await checkAndReport(run.runDir);
  return { ...checked, runDir: run.runDir, gaps: gapsLine(run.spans, run.gaps), clocks: run.clocksLine };
}
