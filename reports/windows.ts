// The second pass of a large run's report: which stretches of the run are drawn in
// full (around each witness, then around faults while a budget of events lasts)
// and reading just those stretches, complete: an operation or hold under way when a
// window opens is carried in from before it, and one under way when it closes is
// followed to its completion.
import { open as openFile } from "node:fs/promises";
import { join } from "node:path";
import { RUN_FILES, type HistoryEvent, type ResourceDecision } from "../store/events.ts";
import { scanLines } from "../store/reader.ts";
import type { Digest } from "./digest.ts";
import type { FaultWindow } from "./faults.ts";
import type { AnomalyGroup } from "./results.ts";
import { emptyHead, INVOKE_TYPE, OK_TYPE, parseLine, readDecisionHead, readEventStart } from "./scan.ts";

/** Events (about) drawn in full in all windows together. */
export const WINDOW_EVENTS = 16_000;
/** Margins tried around a witness's events, widest first, until the windows fit the budget. */
const MARGINS_S = [2, 1, 0.5, 0.2, 0.1, 0.05, 0];
const FAULT_MARGIN_S = 1;
/** How far back an operation or hold under way at a window's start is looked for, and ahead for its end. */
const LEAD = 5e9, TAIL = 5e9;
/** Times of one witness further apart than this get a window each. */
const SPLIT = 20e9;

export interface Window {
  from: number;
  to: number;
  /** Witnesses drawn (highlighted) in this window, as `gi-wi`. */
  witnesses: Set<string>;
  faults: FaultWindow[];
  events: HistoryEvent[];
  decisions: ResourceDecision[];
}

export interface WindowPlan {
  windows: Window[];
  marginS: number;
  faultsShown: number;
}

interface Interval { from: number; to: number; witness?: string; fault?: FaultWindow }

function clusters(times: number[]): number[][] {
  const sorted = [...times].sort((a, b) => a - b);
  const out: number[][] = [];
  for (const t of sorted) {
    const last = out[out.length - 1];
    if (last && t - last[last.length - 1] <= SPLIT) last.push(t);
    else out.push([t]);
  }
  return out;
}

/** Run times of the events (by index) and decisions (by seq) the witnesses cite (digest.ts locate). */
export interface Located { eventTimes: ReadonlyMap<number, number>; seqTimes: ReadonlyMap<number, number> }

function witnessIntervals(groups: readonly AnomalyGroup[], at: Located, margin: number): Interval[] {
  const out: Interval[] = [];
  groups.forEach((g, gi) => g.witnesses.forEach((w, wi) => {
    const times = [...w.events.map((i) => at.eventTimes.get(i)), ...w.seqs.map((s) => at.seqTimes.get(s))].filter((t): t is number => t !== undefined);
    // The first cluster carries the witness's highlight; the others are shown alongside.
    clusters(times).forEach((c, k) => out.push({ from: c[0] - margin, to: c[c.length - 1] + margin, witness: k === 0 ? `${gi}-${wi}` : undefined }));
  }));
  return out;
}

function merge(intervals: readonly Interval[]): Window[] {
  const sorted = [...intervals].sort((a, b) => a.from - b.from);
  const out: Window[] = [];
  for (const iv of sorted) {
    let w = out[out.length - 1];
    if (!w || iv.from > w.to) {
      w = { from: iv.from, to: iv.to, witnesses: new Set(), faults: [], events: [], decisions: [] };
      out.push(w);
    }
    w.to = Math.max(w.to, iv.to);
    if (iv.witness) w.witnesses.add(iv.witness);
    if (iv.fault && !w.faults.includes(iv.fault)) w.faults.push(iv.fault);
  }
  return out;
}

const cost = (d: Digest, ws: readonly Window[]): number => ws.reduce((n, w) => n + d.buckets.eventsIn(w.from, w.to), 0);

/** The windows to draw: every witness (its margin shrunk to fit), then faults in time order while the budget lasts. */
export function planWindows(d: Digest, located: Located, groups: readonly AnomalyGroup[], faults: readonly FaultWindow[], budget = WINDOW_EVENTS): WindowPlan {
  let marginS = 0;
  let chosen: Interval[] = witnessIntervals(groups, located, 0);
  for (const m of MARGINS_S) {
    const ivs = witnessIntervals(groups, located, m * 1e9);
    if (cost(d, merge(ivs)) <= budget || m === 0) { chosen = ivs; marginS = m; break; }
  }
  let faultsShown = 0;
  const fm = FAULT_MARGIN_S * 1e9;
  for (const f of faults) {
    const around: Interval[] = f.to - f.from > 2 * fm
      ? [{ from: f.from - fm, to: f.from + fm, fault: f }, { from: f.to - fm, to: f.to + fm, fault: f }]
      : [{ from: f.from - fm, to: f.to + fm, fault: f }];
    const next = [...chosen, ...around];
    if (cost(d, merge(next)) > budget) break;
    chosen = next;
    faultsShown++;
  }
  const windows = merge(chosen).map((w) => ({ ...w, from: Math.max(d.t0, w.from), to: Math.min(d.t1, w.to) }));
  return { windows, marginS, faultsShown };
}

/** Fills each window's events and decisions from the run's files. */
export async function readWindows(runDir: string, d: Digest, windows: readonly Window[]): Promise<void> {
  const path = join(runDir, RUN_FILES.history);
  for (const w of windows) await readWindow(path, d, w);
  if (d.decisions === null || windows.length === 0) return;
  // Decisions from the first to the last event a window holds: those its writes led to.
  const span = windows.map((w) => {
    let lo = w.from, hi = w.to;
    for (const e of w.events) { if (e.time < lo) lo = e.time; if (e.time > hi) hi = e.time; }
    return { lo, hi };
  });
  // Each window's stretch of the log: it decides in time order, so from the last
  // checkpoint before the window's first event to the first decision after its last.
  const path2 = join(runDir, RUN_FILES.resource);
  const cps = d.resourceCheckpoints;
  const pair: [number, number] = [0, 0];
  for (let k = 0; k < windows.length; k++) {
    const { lo, hi } = span[k];
    let a = 0, b = cps.length - 1, at = 0;
    while (a <= b) {
      const mid = (a + b) >> 1;
      if (cps[mid].time < lo) { at = mid; a = mid + 1; } else b = mid - 1;
    }
    if (cps.length === 0) break;
    await scanLines(path2, (buf, s, e) => {
      if (e === s) return;
      readDecisionHead(buf, s, e, pair);
      if (pair[1] > hi) return false;
      if (pair[1] >= lo) windows[k].decisions.push(parseLine<ResourceDecision>(buf, s, e));
    }, cps[at].offset, 1 << 20);
  }
}

async function readWindow(path: string, d: Digest, w: Window): Promise<void> {
  const start = w.from - LEAD;
  if (d.checkpoints.length === 0) return;
  // The last checkpoint before the lead: every line before it is earlier still.
  let lo = 0, hi = d.checkpoints.length - 1, at = 0;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (d.checkpoints[mid].time < start) { at = mid; lo = mid + 1; } else hi = mid - 1;
  }
  const h = emptyHead();
  // Per process in the lead, where its open invoke's line is and its current hold's
  // acquire lines ([offset, length] pairs): read only if carried into the window.
  const openLine = new Map<number, [number, number]>();
  const holdLines = new Map<number, [number, number, number, number]>();
  const open = new Set<number>();
  const carried: number[] = [];
  let entered = false;
  const enter = (): void => {
    entered = true;
    for (const [a, al, b, bl] of holdLines.values()) carried.push(a, al, b, bl);
    for (const [p, [o, l]] of openLine) { carried.push(o, l); open.add(p); }
  };
  await scanLines(path, (b, s, e, offset) => {
    if (e === s) return;
    readEventStart(b, s, e, h);
    if (h.time < start) return;
    const p = h.process;
    if (h.time < w.from) {
      if (h.nemesis) return;
      if (h.type === INVOKE_TYPE) { openLine.set(p, [offset, e - s]); return; }
      const invoke = openLine.get(p);
      openLine.delete(p);
      if (h.f === "acquire" && h.type === OK_TYPE && invoke !== undefined) holdLines.set(p, [invoke[0], invoke[1], offset, e - s]);
      else if (h.f === "release") holdLines.delete(p);
      return;
    }
    if (!entered) enter();
    if (h.time <= w.to) {
      w.events.push(parseLine<HistoryEvent>(b, s, e));
      if (!h.nemesis) { if (h.type === INVOKE_TYPE) open.add(p); else open.delete(p); }
      return;
    }
    if (open.size === 0 || h.time > w.to + TAIL) return false;
    if (!h.nemesis && h.type !== INVOKE_TYPE && open.delete(p)) w.events.push(parseLine<HistoryEvent>(b, s, e));
  }, d.checkpoints[at].offset, 1 << 20);
  if (!entered) enter();
  if (carried.length === 0) return;
  const fh = await openFile(path, "r");
  try {
    for (let k = 0; k < carried.length; k += 2) {
      const buf = Buffer.allocUnsafe(carried[k + 1]);
      await fh.read(buf, 0, buf.length, carried[k]);
      w.events.push(parseLine<HistoryEvent>(buf, 0, buf.length));
    }
  } finally {
    await fh.close();
  }
}
