// Checking a stored run: the checker reads only the run directory, so a stored run
// is checked exactly as a fresh one. Everything is read and validated before
// anything is written, so bad input (exit 254) leaves the directory untouched.
import { open, readFile, rename, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { BadInput } from "../lib/index.ts";
import { RUN_FILES, type HistoryEvent, type HistoryHeader, type ResourceDecision, type Results } from "../store/events.ts";
import { resourceLogInWorker, streamHistoryInWorkers } from "../store/reader-worker.ts";
import { readHistory, readResourceLog, streamHistory, streamResourceLog, type Checkpoint } from "../store/reader.ts";
import { processMapOf } from "../store/process-map.ts";
import { readProtocolErrors, type ProtocolError } from "../store/protocol-errors.ts";
import { LIVENESS, MODELS, verdict, verdictThread, type CheckOptions } from "./analyze.ts";
import { faultsInEffect } from "./faults-in-effect.ts";
import type { ClockBounds } from "./clock.ts";
import { PairingBuilder, type Paired } from "./paired.ts";

export interface LoadedRun {
  dir: string;
  header: HistoryHeader;
  events: HistoryEvent[];
  decisions: ResourceDecision[] | null;
  protocolErrors: ProtocolError[];
  /** run.json, when present and readable; the checker takes only the options of its own it was run with. */
  info: Record<string, unknown> | null;
  warnings: string[];
}

/** history.ndjson of a run directory, or BadInput saying why there is none. */
async function historyOf(runDir: string): Promise<string> {
  let isDir: boolean;
  try {
    isDir = (await stat(runDir)).isDirectory();
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    throw new BadInput(code === "ENOENT" ? `run directory ${runDir} does not exist` : `run directory ${runDir} cannot be read (${code ?? err})`);
  }
  if (!isDir) throw new BadInput(`${runDir} is not a run directory (it is a file)`);
  const historyPath = join(runDir, RUN_FILES.history);
  try {
    await stat(historyPath);
  } catch {
    throw new BadInput(`${runDir} has no ${RUN_FILES.history}: not a run directory, or the run never started`);
  }
  return historyPath;
}

export async function loadRun(runDir: string): Promise<LoadedRun> {
  const history = await readHistory(await historyOf(runDir));
  const resource = await readResourceLog(join(runDir, RUN_FILES.resource));
  const warnings = [...history.warnings, ...(resource?.warnings ?? [])];
  const info = await readInfo(join(runDir, RUN_FILES.run), warnings);
  const protocolErrors = readProtocolErrors(runDir, warnings);
  return { dir: runDir, header: history.header, events: history.events, decisions: resource?.decisions ?? null, protocolErrors, info, warnings };
}

/**
 * The checker's options a run was made with (run.json `options.model`, set by
 * test:jepsen --model), so a stored run is checked again as it was the first time.
 */
export function optionsOf(info: Record<string, unknown> | null, warnings: string[] = []): CheckOptions {
  const options = info?.options;
  const o = typeof options === "object" && options !== null ? (options as Record<string, unknown>) : {};
  const out: CheckOptions = {};
  const model = o.model;
  if (model === "lease" || model === "strict") out.model = model;
  else if (model !== undefined) warnings.push(`${RUN_FILES.run}: options.model ${JSON.stringify(model)} is not one of ${MODELS.join(", ")}; checked with lease`);
  const liveness = o.liveness;
  if (liveness === "lenient" || liveness === "strict") out.liveness = liveness;
  else if (liveness !== undefined) warnings.push(`${RUN_FILES.run}: options.liveness ${JSON.stringify(liveness)} is not one of ${LIVENESS.join(", ")}; checked with lenient`);
  // A stuck lock: free and not granted for longer than a lease and a command take.
  const ttl = (o.workloadOptions as Record<string, unknown> | undefined)?.ttlMs;
  const command = o.commandTimeoutMs;
  if (typeof ttl === "number" && typeof command === "number" && ttl > 0 && command > 0) out.stuckAfterMs = ttl + command;
  const clock = clockBoundsOf(info);
  if (clock) out.clock = clock;
  const complete = info?.history_complete;
  if (complete === false) out.historyComplete = false;
  else if (complete !== undefined && complete !== true) warnings.push(`${RUN_FILES.run}: history_complete ${JSON.stringify(complete)} is not true or false; the history is taken as complete`);
  return out;
}

/**
 * run.json `clock_error` (a trace's hosts, `fencecheck traces --clock-error`):
 * how far each process's clock may be off. A malformed one is bad input, not
 * ignored: checked without it, possible findings would pass for certain.
 */
export function clockBoundsOf(info: Record<string, unknown> | null): ClockBounds | undefined {
  const c = info?.clock_error;
  if (c === undefined) return undefined;
  const where = `${RUN_FILES.run}: clock_error`;
  const ms = (x: unknown): x is number => typeof x === "number" && Number.isFinite(x) && x >= 0;
  if (typeof c !== "object" || c === null) throw new BadInput(`${where} must be an object {"default_ms": n, "by_process": {...}}`);
  const { default_ms, by_process } = c as Record<string, unknown>;
  if (!ms(default_ms)) throw new BadInput(`${where}.default_ms must be a number of ms >= 0, not ${JSON.stringify(default_ms)}`);
  if (typeof by_process !== "object" || by_process === null || Array.isArray(by_process)) throw new BadInput(`${where}.by_process must be an object of process numbers to ms`);
  for (const [p, v] of Object.entries(by_process)) {
    if (!/^(0|[1-9]\d*)$/.test(p)) throw new BadInput(`${where}.by_process: ${JSON.stringify(p)} is not a process number`);
    if (!ms(v)) throw new BadInput(`${where}.by_process[${JSON.stringify(p)}] must be a number of ms >= 0, not ${JSON.stringify(v)}`);
  }
  return { default_ms, by_process: by_process as Record<string, number> };
}

const defined = (o: CheckOptions): CheckOptions => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));

/** History files from this size on are read in a worker thread: below it, starting the thread costs more than it saves. */
export const READ_IN_WORKER_FROM = 32 << 20;
/**
 * Histories from this size on keep the model check on the checking thread, and
 * the second thread checks the holds' spans alone: the model check's searches
 * take memory of their own (each key's lock operations in columns), which next to
 * this thread's analyses would take a ten-million-event run (1.4 GB) past the
 * 1 GB the check may use (bench:checker).
 */
export const MODEL_CHECK_HERE_FROM = 768 << 20;
/** Batches of decisions the resource log's thread may decode before the paired history takes them: about 60 MB. */
const RESOURCE_BATCHES_AHEAD = 12;

// A little under what a line takes in practice (an operation is two lines).
const BYTES_PER_OP = 240;
const BYTES_PER_DECISION = 160;

/** The header's workload, from the file's first line (undefined when it cannot be read: the reader then says why). */
async function workloadOf(path: string): Promise<unknown> {
  let fd: Awaited<ReturnType<typeof open>> | null = null;
  try {
    fd = await open(path, "r");
    const buf = Buffer.alloc(64 << 10);
    const { bytesRead } = await fd.read(buf, 0, buf.length, 0);
    const text = buf.subarray(0, bytesRead).toString("utf8");
    const end = text.indexOf("\n");
    return (JSON.parse(end < 0 ? text : text.slice(0, end)) as { workload?: unknown }).workload;
  } catch {
    return undefined;
  } finally {
    await fd?.close();
  }
}

/** Size of a file, -1 when there is none. */
async function bytes(path: string): Promise<number> {
  try {
    return (await stat(path)).size;
  } catch {
    return -1;
  }
}

async function readInfo(path: string, warnings: string[]): Promise<Record<string, unknown> | null> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch {
    return null;
  }
  try {
    const v: unknown = JSON.parse(text);
    if (typeof v === "object" && v !== null && !Array.isArray(v)) return v as Record<string, unknown>;
  } catch {
    // Reported below: run.json is for people, the verdict does not depend on it.
  }
  warnings.push(`${RUN_FILES.run}: not a JSON object; ignored`);
  return null;
}

/**
 * Reads and checks a run directory; writes nothing. Throws BadInput for unreadable
 * input. The files are read in one pass each into the paired history's columns, never held
 * as events, so a run of millions of events checks in little more time and memory
 * than it takes to parse it.
 */
export async function checkRun(runDir: string, options: CheckOptions = {}): Promise<{ results: Results; warnings: string[] }> {
  const { results, warnings } = await checkRunKeeping(runDir, options);
  return { results, warnings };
}

/**
 * What the check's one pass leaves behind for a later reader of the run (report.html
 * of a large run, which then needs no pass of its own): the paired history the verdict was
 * drawn from, the nemesis events whole, and checkpoints into both files.
 */
export interface CheckedRun {
  model: Paired;
  /** In (time, index) order. */
  nemesis: HistoryEvent[];
  /** Every `checkpointEvery` events; null when none were asked for, or the history was out of time order and had to be read whole. */
  checkpoints: Checkpoint[] | null;
  /** Every `checkpointEvery` decisions; empty when the run has no resource log. */
  resourceCheckpoints: Checkpoint[];
}

/**
 * Both files of a run read into a PairingBuilder, in one pass each. `grouped` is
 * handed the paired history once the history is in and its operations are grouped into
 * holds (PairingBuilder.group), before the decisions are: what reads only those may
 * start then.
 */
export async function readRun(runDir: string, checkpointEvery?: number, grouped?: (m: Paired) => void) {
  const historyPath = await historyOf(runDir);
  // Columns sized from the files up front are not copied as they grow.
  const expectedOps = Math.ceil((await bytes(historyPath)) / BYTES_PER_OP);
  const resourcePath = join(runDir, RUN_FILES.resource);
  const resourceBytes = await bytes(resourcePath);
  let builder: PairingBuilder | null = null;
  let nemesis: HistoryEvent[] = [];
  // Large files are read in threads while this one builds the model: the history
  // by two at once (every other chunk each), the resource log by one that decodes
  // ahead while the history is read, its decisions going to the pairing once the
  // history is in.
  const resourceThread = resourceBytes >= READ_IN_WORKER_FROM ? resourceLogInWorker(resourcePath, { checkpointEvery, maxAhead: RESOURCE_BATCHES_AHEAD }) : null;
  try {
    const stream = (await bytes(historyPath)) >= READ_IN_WORKER_FROM ? streamHistoryInWorkers : streamHistory;
    // Writes' data are read only where an analysis of the history needs them: a
    // run without a resource log, or a counter run, whose lost updates the history
    // alone may prove beside the log (checker/history-proofs.ts).
    const data = resourceBytes < 0 || (await workloadOf(historyPath)) === "counter";
    const history = await stream(historyPath, (header) => {
      // Called again with a fresh builder when the file had to be reordered.
      nemesis = [];
      return (builder = new PairingBuilder(header, expectedOps, data)).event;
    }, { checkpointEvery, nemesis: (e) => nemesis.push(e), data });
    const b = builder as unknown as PairingBuilder;
    grouped?.(b.group());
    if (resourceBytes >= 0) b.noteResourceLog(Math.ceil(resourceBytes / BYTES_PER_DECISION));
    const resource = resourceThread ? await resourceThread.start(b.decision) : await streamResourceLog(resourcePath, b.decision, { checkpointEvery });
    return { b, history, resource, nemesis };
  } finally {
    resourceThread?.stop();
  }
}

/** checkRun, also returning what the pass read (CheckedRun) with a checkpoint every `checkpointEvery` lines (default: none). */
export async function checkRunKeeping(runDir: string, options: CheckOptions = {}, checkpointEvery?: number):
  Promise<{ results: Results; warnings: string[]; run: CheckedRun }> {
  // A large run's verdict is drawn on two threads; the second starts while the files are read.
  const historyBytes = await bytes(join(runDir, RUN_FILES.history));
  const noted: string[] = [];
  const info = await readInfo(join(runDir, RUN_FILES.run), noted);
  const opts = { ...optionsOf(info, noted), ...defined(options) };
  // Clock bounds check the pairing twice (clock.ts), on this thread.
  const thread = historyBytes >= READ_IN_WORKER_FROM && !opts.clock ? verdictThread(historyBytes < MODEL_CHECK_HERE_FROM) : null;
  try {
    const processes = processMapOf(info, noted);
    // The second thread starts on the holds while this one reads the decisions.
    const { b, history, resource, nemesis } = await readRun(runDir, checkpointEvery, thread ? (m) => thread.begin(m, opts) : undefined);
    b.noteProtocolErrors(readProtocolErrors(runDir, noted));
    const warnings = [...history.warnings, ...(resource?.warnings ?? []), ...noted];
    const model = b.finish();
    const checked = thread ? await thread.verdict(model, opts) : verdict(model, opts);
    // The witnesses kept, told which faults were in effect on their holds.
    const faultWarnings = faultsInEffect(checked.results, model, nemesis, processes);
    const run: CheckedRun = { model, nemesis, checkpoints: history.checkpoints ?? null, resourceCheckpoints: resource?.checkpoints ?? [] };
    return { results: checked.results, warnings: [...warnings, ...checked.warnings, ...faultWarnings], run };
  } finally {
    thread?.stop();
  }
}

/** Replaces results.json whole: a crash mid-write never leaves half a verdict. */
export async function writeResults(runDir: string, results: Results): Promise<void> {
  const path = join(runDir, RUN_FILES.results);
  const tmp = `${path}.${process.pid}.tmp`;
  await writeFile(tmp, JSON.stringify(results, null, 2) + "\n");
  await rename(tmp, path);
}
