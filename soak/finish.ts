// The end of a soak, live or rebuilt: summarize the records, compare with the
// previous soak of the same matrix (or the one --compare names), write
// summary.json and summary.html, and with --keep-runs remove the run directories
// of older soaks, keeping their summaries so later nights still compare.
import { existsSync, lstatSync, readdirSync, statSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { BadInput } from "../lib/index.ts";
import { writeJson } from "../store/index.ts";
import { compareSummaries } from "./compare.ts";
import { renderSummaryHtml } from "./page.ts";
import { listSoaks, SOAK_FILES, SOAKS_DIR, type PlannedRun, type RunRecord, type SoakPlan } from "./records.ts";
import { summarize, type SoakSummary } from "./summary.ts";

export interface FinishInput {
  soakDir: string;
  store: string;
  plan: SoakPlan;
  records: RunRecord[];
  notRun: Array<PlannedRun & { reason: string }>;
  wallS: number;
  interrupted: boolean;
  compare: string | null;
  keepRuns: number | null;
}

export async function finishSoak(i: FinishInput): Promise<SoakSummary> {
  const input = { plan: i.plan, records: i.records, notRun: i.notRun, finished: new Date(), wallS: i.wallS, interrupted: i.interrupted, diskBytes: diskBytes(i.soakDir) };
  // A shard ran a share of the runs of every configuration: against a whole night
  // its counts would read as falls in detection. The merge of the shards compares.
  const previous = i.plan.shard ? null : i.compare !== null ? { path: i.compare, summary: readSummary(i.compare) } : previousSoak(i.store, i.soakDir, i.plan.matrix.name);
  let summary = summarize(input);
  if (previous) {
    // A soak of some configurations (--only, a CI shard) says nothing of the others.
    const changes = compareSummaries(summary, previous.summary).filter((c) => c.kind !== "removed" || i.plan.options.only === null);
    summary = summarize(input, changes, previous.path);
  }
  writeSummary(i.soakDir, summary);
  if (i.keepRuns !== null) pruneRuns(i.store, i.keepRuns);
  return summary;
}

export function writeSummary(soakDir: string, summary: SoakSummary): void {
  writeJson(join(soakDir, SOAK_FILES.summary), summary);
  // Whole or not at all, as summary.json: a reader (npm run serve) never sees half a page.
  const page = join(soakDir, SOAK_FILES.page);
  writeFileSync(`${page}.${process.pid}.tmp`, renderSummaryHtml(summary));
  renameSync(`${page}.${process.pid}.tmp`, page);
}

/** A soak's summary.json, given the soak directory or the file; bad input, naming `option` and the path, when it is neither. */
export function readSummary(path: string, option = "--compare"): SoakSummary {
  const file = existsSync(path) && statSync(resolve(path)).isDirectory() ? join(path, SOAK_FILES.summary) : path;
  let s: Partial<SoakSummary>;
  try {
    s = JSON.parse(readFileSync(file, "utf8")) as Partial<SoakSummary>;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new BadInput(`${option} ${path}: ${code === "ENOENT" ? `no ${SOAK_FILES.summary} there` : `not readable JSON (${err instanceof Error ? err.message : String(err)})`}`);
  }
  if (s?.kind !== "soak-summary" || !Array.isArray(s.configurations)) throw new BadInput(`${option} ${path}: ${file} is not a soak summary (kind "soak-summary")`);
  return s as SoakSummary;
}

/** The newest soak of the same matrix that started before this one and left a summary; a shard's is a part of a night, not a night. */
function previousSoak(store: string, soakDir: string, matrix: string): { path: string; summary: SoakSummary } | null {
  const me = basename(soakDir);
  for (const dir of listSoaks(store).reverse()) {
    if (basename(dir) >= me) continue;
    try {
      const summary = JSON.parse(readFileSync(join(dir, SOAK_FILES.summary), "utf8")) as SoakSummary;
      if (summary.kind === "soak-summary" && summary.matrix?.name === matrix && Array.isArray(summary.configurations) && !summary.shard)
        return { path: `${SOAKS_DIR}/${basename(dir)}`, summary };
    } catch {
      // no summary (a soak killed and never summarized), or not ours: look further back
    }
  }
  return null;
}

/** Removes runs/ and output/ of every soak but the newest `keep`; their summaries stay, marked pruned. */
export function pruneRuns(store: string, keep: number): string[] {
  const soaks = listSoaks(store);
  const old = soaks.slice(0, Math.max(0, soaks.length - keep));
  const pruned: string[] = [];
  for (const dir of old) {
    const summaryPath = join(dir, SOAK_FILES.summary);
    // A soak without a summary was killed: its runs are what --summarize needs.
    if (!existsSync(summaryPath)) continue;
    if (!existsSync(join(dir, SOAK_FILES.runs)) && !existsSync(join(dir, SOAK_FILES.output))) continue;
    rmSync(join(dir, SOAK_FILES.runs), { recursive: true, force: true });
    rmSync(join(dir, SOAK_FILES.output), { recursive: true, force: true });
    try {
      const summary = JSON.parse(readFileSync(summaryPath, "utf8")) as SoakSummary;
      summary.runs_pruned = true;
      summary.disk_bytes = diskBytes(dir);
      writeSummary(dir, summary);
    } catch {
      // an unreadable summary stays as it was; the runs are gone all the same
    }
    pruned.push(dir);
  }
  return pruned;
}

/** Bytes allocated on disk under `dir`, as du counts them; symlinks are not followed. */
export function diskBytes(dir: string): number {
  let total = 0;
  const walk = (d: string): void => {
    let entries;
    try {
      entries = readdirSync(d, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const p = join(d, e.name);
      try {
        const st = lstatSync(p);
        total += st.blocks * 512;
        if (e.isDirectory()) walk(p);
      } catch {
        // removed while we looked
      }
    }
  };
  walk(dir);
  return total;
}
