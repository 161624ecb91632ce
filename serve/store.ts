// What the browser is shown of the run store: the run directories under it and, for
// each, the few facts a list needs. Everything here was written by some run (or
// put there by hand), so every field is checked and nothing is trusted to be HTML.
import { readdir, readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { RUN_FILES } from "../store/index.ts";
import { SOAK_FILES, SOAKS_DIR } from "../soak/index.ts";

export interface RunSummary {
  /** Path under the store, '/'-separated, e.g. "redis-counter-pause-fence-on/20261122T030252.325Z". */
  rel: string;
  test: string;
  /** ISO time the run started, or null when nothing says. */
  started: string | null;
  verdict: "VALID" | "INVALID" | "UNKNOWN" | "NOT CHECKED" | "UNREADABLE";
  anomalyTypes: string[];
  /** Which of the run's own files exist (report.html, history.ndjson, ...). */
  files: string[];
  /** Regular files directly under logs/. */
  logs: string[];
}

/** The files of a run directory that may be served, besides those under logs/. */
export const SERVED_FILES: readonly string[] = [RUN_FILES.report, RUN_FILES.history, RUN_FILES.resource, RUN_FILES.protocolErrors, RUN_FILES.results, RUN_FILES.run];

// Run directories sit at <test-name>/<time>/, fixtures at fixtures/<good|bad>/<name>/;
// a little deeper is allowed for stores arranged by hand.
const MAX_DEPTH = 4;
const MARKERS: readonly string[] = [RUN_FILES.history, RUN_FILES.run, RUN_FILES.results];

/** Every run directory under `root`, newest first. Symlinks (`latest`) are not followed. */
export async function listRuns(root: string): Promise<RunSummary[]> {
  const dirs: string[] = [];
  const walk = async (rel: string[], depth: number): Promise<void> => {
    let entries;
    try {
      entries = await readdir(join(root, ...rel), { withFileTypes: true });
    } catch {
      return;
    }
    if (entries.some((e) => e.isFile() && MARKERS.includes(e.name))) {
      dirs.push(rel.join("/"));
      return;
    }
    if (depth >= MAX_DEPTH) return;
    // A soak's runs are listed on its summary page, not among the single runs.
    for (const e of entries) if (e.isDirectory() && e.name !== RUN_FILES.logs && !(depth === 0 && e.name === SOAKS_DIR)) await walk([...rel, e.name], depth + 1);
  };
  await walk([], 0);
  const runs = await Promise.all(dirs.filter((d) => d !== "").map((rel) => summarize(root, rel)));
  return runs.sort((a, b) => (b.started ?? "").localeCompare(a.started ?? "") || a.rel.localeCompare(b.rel));
}

/** The facts of the run directory at `rel` (which the caller has found to be one). */
export async function summarize(root: string, rel: string): Promise<RunSummary> {
  const dir = join(root, ...rel.split("/"));
  const files: string[] = [];
  for (const name of SERVED_FILES) if (await isFile(join(dir, name))) files.push(name);
  const info = await readJsonObject(join(dir, RUN_FILES.run));
  const results = await readJsonObject(join(dir, RUN_FILES.results));
  const segments = rel.split("/");
  const test = typeof info?.test === "string" ? info.test : (segments.at(-2) ?? segments[0]);
  return {
    rel,
    test,
    started: startedOf(info, segments.at(-1) ?? ""),
    verdict: verdictOf(results, files.includes(RUN_FILES.results)),
    anomalyTypes: Array.isArray(results?.anomaly_types) ? results.anomaly_types.map(String) : [],
    files,
    logs: await logsOf(join(dir, RUN_FILES.logs)),
  };
}

export interface SoakListing {
  /** Path under the store, e.g. "soaks/20261124T020000.000Z". */
  rel: string;
  matrix: string;
  started: string | null;
  /** null: no summary yet (running, or killed: npm run soak -- --summarize). */
  exitCode: number | null;
  verdict: string;
  configurations: number;
  missed: string[];
  /** What got worse since the soak it was compared with. */
  worse: string[];
}

/** Every soak under `<root>/soaks/`, newest first, with what its summary says. */
export async function listSoakDirs(root: string): Promise<SoakListing[]> {
  let names: string[];
  try {
    names = (await readdir(join(root, SOAKS_DIR), { withFileTypes: true })).filter((e) => e.isDirectory()).map((e) => e.name);
  } catch {
    return [];
  }
  const out: SoakListing[] = [];
  for (const name of names.sort().reverse()) {
    const dir = join(root, SOAKS_DIR, name);
    if (!(await isSoakDir(dir))) continue;
    const summary = await readJsonObject(join(dir, SOAK_FILES.summary));
    const plan = await readJsonObject(join(dir, SOAK_FILES.plan));
    const configs = Array.isArray(summary?.configurations) ? (summary.configurations as Array<Record<string, unknown>>) : [];
    const changes = Array.isArray(summary?.changes) ? (summary.changes as Array<Record<string, unknown>>) : [];
    const matrixOf = (o: Record<string, unknown> | null | undefined): unknown => (o?.matrix as Record<string, unknown> | undefined)?.name;
    out.push({
      rel: `${SOAKS_DIR}/${name}`,
      matrix: String(matrixOf(summary) ?? matrixOf(plan) ?? "?"),
      started: typeof plan?.started === "string" ? plan.started : startedOf(null, name),
      exitCode: typeof summary?.exit_code === "number" ? summary.exit_code : null,
      verdict: typeof summary?.verdict === "string" ? summary.verdict : "no summary yet: running, or killed (fencecheck soak --summarize)",
      configurations: configs.length,
      missed: configs.filter((c) => c.expectation === "missed").map((c) => String(c.name)),
      worse: changes.filter((c) => ["newly-failing", "new-anomaly-type", "detection-fell", "new-crashes"].includes(String(c.kind))).map((c) => String(c.sentence)),
    });
  }
  return out;
}

/** A soak directory: it has its plan (soak.json). */
export async function isSoakDir(dir: string): Promise<boolean> {
  return isFile(join(dir, SOAK_FILES.plan));
}

export async function isRunDir(dir: string): Promise<boolean> {
  for (const name of MARKERS) if (await isFile(join(dir, name))) return true;
  return false;
}

function verdictOf(results: Record<string, unknown> | null, present: boolean): RunSummary["verdict"] {
  if (!present) return "NOT CHECKED";
  if (results?.valid === true) return "VALID";
  if (results?.valid === false) return "INVALID";
  if (results?.valid === "unknown") return "UNKNOWN";
  return "UNREADABLE";
}

// A run directory is named by its start, YYYYMMDDTHHMMSS.mmmZ (store/run-dir.ts).
const STAMP = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})\.(\d{3})Z$/;

function startedOf(info: Record<string, unknown> | null, name: string): string | null {
  if (typeof info?.started === "string" && !Number.isNaN(Date.parse(info.started))) return new Date(info.started).toISOString();
  const m = STAMP.exec(name);
  return m ? `${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:${m[6]}.${m[7]}Z` : null;
}

async function logsOf(dir: string): Promise<string[]> {
  try {
    const entries = await readdir(dir, { withFileTypes: true });
    return entries.filter((e) => e.isFile()).map((e) => e.name).sort();
  } catch {
    return [];
  }
}

async function isFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}

async function readJsonObject(path: string): Promise<Record<string, unknown> | null> {
  try {
    const v: unknown = JSON.parse(await readFile(path, "utf8"));
    return typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}
