// The soak directory on disk: the plan written before the first run, one record
// per finished run appended as it finishes, and the summary at the end. The
// records are appended one line at a time, so a soak killed hard loses at most
// the run it was in, and `--summarize` rebuilds the summary from what is there.
//
//   <store>/soaks/<YYYYMMDDTHHMMSS.mmmZ>/
//     soak.json       the matrix, the soak's options, every planned run with its seed
//     runs.ndjson     one record per finished run
//     runs/<configuration>/<test-name>/<time>/   each run, stored as test:jepsen stores it
//     output/<configuration>-<i>.log             each run's terminal output
//     summary.json, summary.html
import { appendFileSync, existsSync, mkdirSync, readFileSync, readdirSync, renameSync, symlinkSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { BadInput } from "../lib/index.ts";
import { runStamp, writeJson } from "../store/index.ts";
import type { Configuration } from "./matrix.ts";

/** Share `index` (1-based) of `count` of a soak's runs (--shard), which its records name. */
export interface Shard {
  index: number;
  count: number;
}

export const SOAK_FILES = {
  plan: "soak.json",
  records: "runs.ndjson",
  summary: "summary.json",
  page: "summary.html",
  runs: "runs",
  output: "output",
} as const;

export type RunStatus = "valid" | "invalid" | "unknown" | "crashed" | "interrupted";

export interface RunRecord {
  config: string;
  index: number;
  seed: number;
  status: RunStatus;
  /** test:jepsen's exit code (null when it died of a signal). */
  exit_code: number | null;
  /** Relative to the soak directory; null when the run never made one. */
  run_dir: string | null;
  output: string;
  wall_s: number;
  anomaly_types: string[];
  /** Witnesses found per anomaly type. */
  anomaly_counts: Record<string, number>;
  acquire_ms: { p50: number; p99: number } | null;
  /** Writes the resource refused for a stale fence (absent in records from before it was kept). */
  stale_writes_refused?: number;
  /** Format 2 runs: holds certainly lost, how many of them the library told its user of, and the median delay of telling (stats.lost_holds). */
  lost_holds?: { holds: number; told: number; told_after_p50_ms: number | null };
  /** Times an adapter program broke the protocol (stats.protocol_errors), when it did: such a run is UNKNOWN unless INVALID. */
  protocol_errors?: number;
  /** Faults injected, by nemesis start event. */
  faults: Record<string, number>;
  /** The test:jepsen arguments of the run; with npm run test:jepsen -- they repeat it. */
  argv: string[];
  error?: string;
  /** Checked by --summarize from the history a killed soak left; the run did not reach its end. */
  incomplete?: boolean;
}

export interface PlannedRun {
  config: string;
  index: number;
  seed: number;
  argv: string[];
}

export interface SoakPlan {
  format: 1;
  kind: "soak";
  matrix: { name: string; source: string; hash: string; configurations: Configuration[] };
  options: { test_count: number; time_limit_s: number | null; deploy?: "local" | "docker" | null; time_budget_s: number | null; seed: number; only: string[] | null; metrics_port?: number | null; jobs?: number };
  started: string;
  command: string[];
  runs: PlannedRun[];
  /** --shard: this soak ran share `index` of `count` of the plan (runs holds that share only). */
  shard?: Shard;
  /** soak --merge: the shards this soak was made of, and the shares no directory was given for. */
  merged?: MergedFrom;
}

export interface MergedFrom {
  count: number;
  shards: Array<{ index: number; dir: string; started: string }>;
  missing: number[];
}

export const SOAKS_DIR = "soaks";

export function soaksRoot(store: string): string {
  return resolve(store, SOAKS_DIR);
}

export function createSoakDir(store: string): string {
  const root = soaksRoot(store);
  mkdirSync(root, { recursive: true });
  let dir = join(root, runStamp());
  // Two soaks started in the same millisecond (tests) must not share a directory.
  for (let n = 1; existsSync(dir); n++) dir = join(root, `${runStamp()}-${n}`);
  mkdirSync(join(dir, SOAK_FILES.output), { recursive: true });
  mkdirSync(join(dir, SOAK_FILES.runs), { recursive: true });
  return dir;
}

/** `<store>/soaks/latest` -> the newest soak, replaced atomically. */
export function linkLatest(store: string, soakDir: string): void {
  const root = soaksRoot(store);
  const link = join(root, "latest");
  const tmp = `${link}.${process.pid}`;
  symlinkSync(relative(root, soakDir), tmp);
  renameSync(tmp, link);
}

export function writePlan(soakDir: string, plan: SoakPlan): void {
  writeJson(join(soakDir, SOAK_FILES.plan), plan);
}

export function appendRecord(soakDir: string, record: RunRecord): void {
  appendFileSync(join(soakDir, SOAK_FILES.records), JSON.stringify(record) + "\n");
}

export function readPlan(soakDir: string): SoakPlan {
  const path = join(soakDir, SOAK_FILES.plan);
  let plan: unknown;
  try {
    plan = JSON.parse(readFileSync(path, "utf8"));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new BadInput(`${soakDir} is not a soak directory: ${code === "ENOENT" ? `it has no ${SOAK_FILES.plan}` : `${path} is not readable JSON (${err instanceof Error ? err.message : String(err)})`}`);
  }
  const p = plan as Partial<SoakPlan>;
  if (p?.kind !== "soak" || p.format !== 1 || !Array.isArray(p.runs) || !p.matrix || !Array.isArray(p.matrix.configurations))
    throw new BadInput(`${path}: not a soak plan of format 1 (kind "soak", matrix, runs)`);
  return p as SoakPlan;
}

/** The records of runs.ndjson; a line cut short by a kill is skipped, any other bad line is named. */
export function readRecords(soakDir: string): { records: RunRecord[]; warnings: string[] } {
  const path = join(soakDir, SOAK_FILES.records);
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch {
    return { records: [], warnings: [] };
  }
  const lines = text.split("\n");
  const records: RunRecord[] = [];
  const warnings: string[] = [];
  lines.forEach((line, i) => {
    if (line.trim() === "") return;
    try {
      const r = JSON.parse(line) as RunRecord;
      if (typeof r.config !== "string" || typeof r.index !== "number" || typeof r.status !== "string") throw new Error("not a run record");
      records.push(r);
    } catch (err) {
      const last = i === lines.length - 1;
      if (last) warnings.push(`${path}:${i + 1}: a last line cut short was skipped`);
      else throw new BadInput(`${path}:${i + 1}: ${err instanceof Error ? err.message : String(err)}`);
    }
  });
  return { records, warnings };
}

/** Soak directories under the store, oldest first (their names are their start times). */
export function listSoaks(store: string): string[] {
  const root = soaksRoot(store);
  let names: string[];
  try {
    names = readdirSync(root, { withFileTypes: true })
      .filter((e) => e.isDirectory() && /^\d{8}T\d{6}\.\d{3}Z(-\d+)?$/.test(e.name))
      .map((e) => e.name);
  } catch {
    return [];
  }
  return names.sort().map((n) => join(root, n));
}
