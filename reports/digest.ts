// The first pass of a large run's report: one read of history.ndjson (and a count
// of resource.ndjson's lines) that keeps only what the page draws of the whole run
// (the per-bucket overview, the nemesis events) and where in each file every
// stretch of lines starts, so that the second pass (windows.ts) reads just the
// lines it shows in full. `npm run check` does without it: the checker's pass keeps
// the same (checked.ts); it serves a report made without that pass.
import { open, stat } from "node:fs/promises";
import { join } from "node:path";
import { BadInput } from "../lib/index.ts";
import { RUN_FILES, type HistoryEvent, type HistoryHeader } from "../store/events.ts";
import { scanLines } from "../store/reader.ts";
import { InOrder } from "../store/structure.ts";
import { Buckets, OUTCOMES, rowOf } from "./buckets.ts";
import { emptyHead, FAIL_TYPE, INFO_TYPE, INVOKE_TYPE, OK_TYPE, parseLine, readDecisionHead, readEventHead, readEventStart } from "./scan.ts";

/** A line every CHECKPOINT_EVERY: where it starts, its time, and its index (history) or seq (resource log). */
export interface Checkpoint { offset: number; time: number; n: number }

export interface Digest {
  header: HistoryHeader;
  events: number;
  ops: number;
  holds: number;
  /** null: no resource log. */
  decisions: number | null;
  t0: number;
  t1: number;
  buckets: Buckets;
  nemesis: HistoryEvent[];
  checkpoints: Checkpoint[];
  resourceCheckpoints: Checkpoint[];
}

export const CHECKPOINT_EVERY = 2048;
const OUTCOME_OK = OUTCOMES.indexOf("ok"), OUTCOME_FAIL = OUTCOMES.indexOf("fail");
const OUTCOME_STALE = OUTCOMES.indexOf("stale"), OUTCOME_INFO = OUTCOMES.indexOf("info");
const SMALL = 1 << 16;

/**
 * null when history.ndjson is not in (time, index) order with indexes 0, 1, 2, ...
 * (a killed run's): such a file cannot be read by stretches.
 */
export async function digestRun(runDir: string): Promise<Digest | null> {
  let header: HistoryHeader | null = null;
  let buckets: Buckets | null = null;
  const h = emptyHead();
  const nemesis: HistoryEvent[] = [];
  const checkpoints: Checkpoint[] = [];
  // Per process: the invoke time of its open operation (NaN: none) and its f's row.
  const open: number[] = [];
  const openRow: number[] = [];
  const openBig = new Map<number, [number, number]>();
  let events = 0, ops = 0, holds = 0, t0 = NaN, t1 = 0, ordered = true;
  const order = new InOrder();

  await scanLines(join(runDir, RUN_FILES.history), (b, s, e, offset) => {
    if (header === null) {
      const text = b.toString("utf8", s, e);
      header = JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text) as HistoryHeader;
      return;
    }
    if (e === s) return;
    readEventHead(b, s, e, h);
    if (!order.take(h)) { ordered = false; return false; }
    if (events % CHECKPOINT_EVERY === 0) checkpoints.push({ offset, time: h.time, n: h.index });
    if (events === 0) { t0 = h.time; buckets = new Buckets(t0); }
    events++;
    t1 = h.time;
    buckets!.event(h.time);
    if (h.nemesis) { nemesis.push(parseLine<HistoryEvent>(b, s, e)); return; }
    const p = h.process;
    const small = p >= 0 && p < SMALL && Number.isInteger(p);
    if (h.type === INVOKE_TYPE) {
      if (small) {
        while (open.length <= p) { open.push(NaN); openRow.push(0); }
        open[p] = h.time;
        openRow[p] = rowOf(h.f);
      } else openBig.set(p, [h.time, rowOf(h.f)]);
      return;
    }
    const at = small ? open[p] : openBig.get(p)?.[0];
    // A completion without an open invoke: the checker has refused the file already.
    if (at === undefined || Number.isNaN(at)) return;
    if (small) open[p] = NaN; else openBig.delete(p);
    if (h.type === OK_TYPE && h.f === "acquire") holds++;
    const outcome = h.type === OK_TYPE ? OUTCOME_OK : h.type === INFO_TYPE ? OUTCOME_INFO
      : h.type === FAIL_TYPE && h.f === "write" && h.error === "stale-fence" ? OUTCOME_STALE : OUTCOME_FAIL;
    ops++;
    const row = rowOf(h.f);
    buckets!.op(at, row, outcome, (h.time - at) / 1e6, row === 0);
  });
  if (header === null) throw new BadInput(`${RUN_FILES.history} line 1: missing header`);
  if (!ordered) return null;
  const b = buckets ?? new Buckets(0);
  // Still open at the end: unknown, with the latency reached so far (a lower bound).
  open.forEach((at, p) => { if (!Number.isNaN(at)) { ops++; b.op(at, openRow[p], OUTCOME_INFO, (t1 - at) / 1e6, openRow[p] === 0); } });
  for (const [at, row] of openBig.values()) { ops++; b.op(at, row, OUTCOME_INFO, (t1 - at) / 1e6, row === 0); }
  const resource = await digestResourceLog(join(runDir, RUN_FILES.resource));
  if (resource) {
    if (Number.isNaN(t0) || resource.t0 < t0) t0 = resource.t0;
    if (resource.t1 > t1) t1 = resource.t1;
  }
  if (Number.isNaN(t0)) t0 = t1;
  return {
    header, events, ops, holds, decisions: resource?.decisions ?? null, t0, t1, buckets: b, nemesis, checkpoints,
    resourceCheckpoints: resource?.checkpoints ?? [],
  };
}

/**
 * The resource log's lines counted, a checkpoint every CHECKPOINT_EVERY, and its
 * span: the resource decides in time order, so its first and last lines give it.
 */
async function digestResourceLog(path: string): Promise<{ decisions: number; t0: number; t1: number; checkpoints: Checkpoint[] } | null> {
  try {
    await stat(path);
  } catch (err) {
    if ((err as { code?: unknown }).code === "ENOENT") return null;
    throw err;
  }
  const d: [number, number] = [0, 0];
  const checkpoints: Checkpoint[] = [];
  let n = 0, lastAt = -1, lastLength = 0, t0 = NaN, t1 = NaN;
  await scanLines(path, (b, s, e, offset) => {
    if (e === s) return;
    if (n++ % CHECKPOINT_EVERY === 0) {
      readDecisionHead(b, s, e, d);
      checkpoints.push({ offset, time: d[1], n: d[0] });
      if (n === 1) t0 = t1 = d[1];
    }
    lastAt = offset;
    lastLength = e - s;
  });
  if (n > 1) {
    const fh = await open(path, "r");
    try {
      const buf = Buffer.alloc(lastLength);
      await fh.read(buf, 0, lastLength, lastAt);
      readDecisionHead(buf, 0, lastLength, d);
      t1 = Math.max(t1, d[1]);
    } finally {
      await fh.close();
    }
  }
  return { decisions: n, t0, t1, checkpoints };
}

/**
 * The run time of each event (by index) and decision (by seq) the witnesses cite,
 * read from the stretch of lines its checkpoint starts.
 */
export async function locate(runDir: string, d: Digest, indexes: Iterable<number>, seqs: Iterable<number>): Promise<{ eventTimes: Map<number, number>; seqTimes: Map<number, number> }> {
  const eventTimes = new Map<number, number>();
  const seqTimes = new Map<number, number>();
  const h = emptyHead();
  await byStretch(join(runDir, RUN_FILES.history), d.checkpoints, indexes, eventTimes, (b, s, e) => {
    readEventStart(b, s, e, h);
    return [h.index, h.time];
  });
  if (d.decisions !== null) {
    const pair: [number, number] = [0, 0];
    await byStretch(join(runDir, RUN_FILES.resource), d.resourceCheckpoints, seqs, seqTimes, (b, s, e) => {
      readDecisionHead(b, s, e, pair);
      return pair;
    });
  }
  return { eventTimes, seqTimes };
}

/** Reads, for each wanted number, the stretch after the last checkpoint at or below it. */
async function byStretch(path: string, cps: readonly Checkpoint[], wanted: Iterable<number>, found: Map<number, number>,
  head: (b: Buffer, s: number, e: number) => readonly [number, number]): Promise<void> {
  const sorted = [...new Set(wanted)].sort((a, b) => a - b);
  let k = 0;
  while (k < sorted.length) {
    let lo = 0, hi = cps.length - 1, at = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (cps[mid].n <= sorted[k]) { at = mid; lo = mid + 1; } else hi = mid - 1;
    }
    if (at < 0) { k++; continue; }
    const end = at + 1 < cps.length ? cps[at + 1].n : Infinity;
    await scanLines(path, (b, s, e) => {
      if (e === s) return;
      const [n, time] = head(b, s, e);
      while (k < sorted.length && sorted[k] < n) k++;
      if (k < sorted.length && sorted[k] === n) { found.set(n, time); k++; }
      return k < sorted.length && sorted[k] < end && n < end;
    }, cps[at].offset, 1 << 17);
    while (k < sorted.length && sorted[k] < end) k++;
  }
}
