// `fencecheck check --reference RUN`: the run checked by the reference checker
// (checker/reference/, written from the documents alone, docs/reference-checker.md)
// instead of the fast one. Prints a summary like the fast check's, writes
// results.json into --out DIR or the run, and exits 0/1/2 by the verdict
// (docs/history-format.md "Exit codes"). No report.html: the report's writer
// belongs to the fast checker's model of the run.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { estimateSeconds, referenceCheck, type Header, type ReferenceResults } from "../checker/reference/index.ts";
import { exitCodeFor } from "../lib/index.ts";

/** Past this many events the command says how long the check may take. */
export const LARGE_HISTORY = 200_000;

function countEvents(runDir: string): number {
  const path = join(runDir, "history.ndjson");
  if (!existsSync(path)) return 0;
  const bytes = readFileSync(path);
  let lines = 0;
  for (let i = 0; i < bytes.length; i++) if (bytes[i] === 10) lines++;
  return Math.max(0, lines - 1);
}

export function referenceSummary(header: Header, results: ReferenceResults): string {
  const verdict = results.valid === true ? "VALID" : results.valid === false ? "INVALID" : "UNKNOWN";
  const lines = [`${verdict}  ${header.workload} on ${header.backend}, fencing ${header.fencing ? "on" : "off"}  (run ${header.run})  [reference checker]`];
  for (const t of results.anomaly_types) {
    const n = results.stats.anomaly_counts[t];
    const kept = results.anomalies[t].length;
    lines.push(`  ${t} ×${n}${kept < n ? ` (${kept} witnesses kept)` : ""}: ${results.anomalies[t][0].explanation}`);
  }
  for (const r of results.stats.unknown_reasons) lines.push(`  cannot fully check the run: ${r}`);
  const live = results.liveness;
  if (live && !live.strict)
    for (const [t, ws] of Object.entries(live.findings)) if (ws.length) lines.push(`  liveness: ${t} ×${ws.length} (not counted: --liveness lenient): ${ws[0].explanation}`);
  return lines.join("\n");
}

export async function checkWithReference(runDir: string, opts: { out?: string; liveness?: "lenient" | "strict"; intoRun: boolean }): Promise<number> {
  const events = countEvents(runDir);
  if (events > LARGE_HISTORY) {
    const s = estimateSeconds(events);
    process.stderr.write(
      `fencecheck check --reference: ${events} events; the reference checker reads the whole history into memory and may take about ${s < 90 ? `${Math.ceil(s)} s` : `${Math.ceil(s / 60)} min`} (measured: about 30 µs an event on a two-core machine; more where many holds of a key are valid at once); going on\n`,
    );
  }
  const { results, warnings, header } = await referenceCheck(runDir, { liveness: opts.liveness });
  const outDir = opts.out ?? runDir;
  mkdirSync(outDir, { recursive: true });
  writeFileSync(join(outDir, "results.json"), JSON.stringify(results, null, 2) + "\n");
  for (const w of warnings) process.stderr.write(`warning: ${w}\n`);
  process.stdout.write(`${referenceSummary(header, results)}\n`);
  process.stdout.write(
    opts.intoRun
      ? `Wrote results.json into the run, ${runDir} (--out DIR leaves a run untouched); no report.html with --reference\n`
      : `Wrote results.json into ${outDir}; the run ${runDir} is untouched; no report.html with --reference\n`,
  );
  return exitCodeFor(results.valid);
}
