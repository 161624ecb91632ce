// npm run soak -- (--preset NAME | --matrix FILE) [options]: every configuration of a
// matrix, --test-count times, as test:jepsen runs; a line per run, a table at the
// end, summary.json and summary.html, and what changed since the previous soak.
// npm run soak -- --summarize DIR: the same summary for a soak that was killed.
import { BadInput, EXIT, helpText } from "../lib/index.ts";
import { describeExpectation, renderTable, runSoak, summarizeSoak, type SoakSummary } from "../soak/index.ts";
import { checkMetricsPort } from "../runner/index.ts";
import { exitWith } from "./run-and-check.ts";
import { parseSoakArgs, SOAK_OPTIONS, SOAK_USAGE, type SoakRequest } from "./soak-options.ts";

const log = (line: string): void => void process.stderr.write(line + "\n");

async function main(): Promise<number> {
  let request: SoakRequest;
  try {
    const parsed = parseSoakArgs(process.argv.slice(2));
    if (parsed.help) {
      process.stdout.write(helpText(SOAK_USAGE, SOAK_OPTIONS));
      return EXIT.valid;
    }
    request = parsed.request;
    if (request.kind === "summarize") return done(await summarizeSoak(request.dir, { compare: request.compare, keepRuns: request.keepRuns, log }), request.dir);
    // Taken now, it would be taken for every run: said once, before hours of crashed runs.
    if (request.kind === "run" && request.metricsPort !== null) await checkMetricsPort(request.metricsPort);
  } catch (err) {
    if (err instanceof BadInput) {
      process.stderr.write(`fencecheck soak: ${err.message}\n`);
      return EXIT.badInput;
    }
    throw err;
  }
  if (request.kind === "list") {
    for (const c of request.configurations) process.stdout.write(`${c.name.padEnd(34)} expects ${describeExpectation(c.expect)}${c.description ? `\n${"".padEnd(36)}${c.description}` : ""}\n`);
    return EXIT.valid;
  }
  const { soakDir, summary } = await runSoak({ ...request, log });
  return done(summary, soakDir);
}

function done(summary: SoakSummary, soakDir: string): number {
  process.stdout.write(`${renderTable(summary)}\n`);
  process.stdout.write(`Summary: ${soakDir}/summary.html\n`);
  return summary.exit_code;
}

exitWith(main);
