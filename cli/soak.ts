// `fencecheck soak (--preset NAME | --matrix FILE) [options]` (in the checkout also
// `npm run soak --`): every configuration of a matrix, --test-count times, as
// `fencecheck test` runs; a line per run, a table at the end, summary.json and
// summary.html, and what changed since the previous soak.
// `fencecheck soak --summarize DIR`: the same summary for a soak that was killed.
// `fencecheck soak --merge DIR...`: the shards of a soak (--shard I/N) made one.
import { EXIT, helpText } from "../lib/index.ts";
import { describeExpectation, mergeSoaks, plannedPairs, renderTable, runSoak, summarizeSoak, testOf, type SoakSummary } from "../soak/index.ts";
import { takeMetricsPorts } from "../runner/index.ts";
import { ensureFor } from "../runner/index.ts";
import { parseSoakArgs, SOAK_OPTIONS, SOAK_USAGE, type SoakRequest } from "./soak-options.ts";

const log = (line: string): void => void process.stderr.write(line + "\n");

export async function main(argv: string[]): Promise<number> {
  const parsed = parseSoakArgs(argv);
  if (parsed.help) {
    process.stdout.write(helpText(SOAK_USAGE, SOAK_OPTIONS));
    return EXIT.valid;
  }
  const request: SoakRequest = parsed.request;
  if (request.kind === "summarize") return done(await summarizeSoak(request.dir, { compare: request.compare, keepRuns: request.keepRuns, log }), request.dir);
  if (request.kind === "merge") {
    const { soakDir, summary } = await mergeSoaks(request.dirs, { store: request.store, compare: request.compare, keepRuns: request.keepRuns, log });
    return done(summary, soakDir);
  }
  if (request.kind === "list") {
    for (const c of request.configurations) {
      // A configuration's own time limit, where it sets one (the detection preset's vary by configuration).
      const limit = c.options["time-limit"] === undefined ? "" : `, runs of ${c.options["time-limit"]} s`;
      process.stdout.write(`${c.name.padEnd(34)} expects ${describeExpectation(c.expect)}${limit}${c.description ? `\n${"".padEnd(36)}${c.description}` : ""}\n`);
    }
    return EXIT.valid;
  }
  // Taken now, it would be taken for every run: said once, before hours of crashed runs.
  if (request.metricsPort !== null) await takeMetricsPorts(request.metricsPort, request.jobs);
  // What every configuration needs, installed once before the first run rather than by a run mid-soak.
  // A shard installs what its own runs need: the machine of a Redis-only share needs no JRE.
  const running = new Set(plannedPairs(request.configurations, request.testCount, request.shard).map((p) => p.config));
  await ensureFor(request.configurations.filter((c) => running.has(c)).map((c) => testOf(c, { timeLimitS: request.timeLimitS ?? undefined, deploy: request.deploy ?? undefined })), log);
  const { soakDir, summary } = await runSoak({ ...request, log });
  return done(summary, soakDir);
}

function done(summary: SoakSummary, soakDir: string): number {
  process.stdout.write(`${renderTable(summary)}\n`);
  process.stdout.write(`Summary: ${soakDir}/summary.html\n`);
  return summary.exit_code;
}

