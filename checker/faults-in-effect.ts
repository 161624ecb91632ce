// Which faults were in effect on a witness's holds. A witness proves that
// something went wrong; the person reading it next asks why, and the nemesis
// events say: a pause that froze the older holder, a partition that cut its
// worker off, a server killed mid-hold. This post-pass runs over the witnesses the
// verdict kept (at most 100 per type), after it, and changes neither how many
// there are nor the verdict: it adds `faults` (data) and a sentence naming them.
//
// A witness's events and seqs give its processes and, through their holds, the
// spans of time they held (an operation outside any hold, its own span). A fault
// is in effect on a process when its window overlaps one of those spans and it
// hit that process: a fault on its worker or on one of its worker's links (run.json's
// `processes` says which worker ran it), or a fault on a server, which every
// client depends on. Without the map, only the faults on servers can be named.
import type { HistoryEvent, Results, Witness } from "../store/events.ts";
import { isWorker, linkWorker, NO_PROCESS_MAP, type ProcessMap } from "../store/process-map.ts";
import { faultWindows, type FaultWindow } from "./fault-windows.ts";
import { faultSentence, type FaultInEffect } from "./fault-words.ts";
import type { Paired } from "./paired.ts";

export type { FaultInEffect } from "./fault-words.ts";

/** A fault window with its targets sorted by what they are, once per check. */
interface Fault {
  window: FaultWindow;
  /** Workers it hit: targets that are workers, and the workers whose links it hit. */
  workers: Set<string>;
  /** What it was on (a fault on a proxy the workers share reaches every worker: "server"). */
  on: FaultInEffect["on"];
}

/** A process of a witness and a span of time it held (or ran an operation). */
interface Span { process: number; from: number; to: number }

/**
 * Adds `faults` and a sentence to every witness of `results` (its anomalies, its
 * liveness findings, the model's witnesses kept in stats), and `stats.process_map`.
 * Returns the warnings for the person checking the run.
 */
export function faultsInEffect(results: Results, m: Paired, nemesis: readonly HistoryEvent[], processes: ProcessMap | null): string[] {
  results.stats.process_map = processes !== null;
  const faults = classify(faultWindows(nemesis, m.lastTime), processes);
  const onWorkers = faults.filter((f) => f.on !== "server").length;
  const warnings = processes === null && onWorkers > 0
    ? [`${NO_PROCESS_MAP}: witnesses name the faults on servers, not the ${onWorkers} on workers or their links`]
    : [];
  const witnesses = witnessesOf(results);
  if (faults.length === 0 || witnesses.length === 0) return warnings;
  // Compared with each witness in time order, up to the last that can overlap it.
  faults.sort((a, b) => a.window.from - b.window.from);
  const spans = spansOf(m, witnesses);
  for (const w of witnesses) {
    const { spans: s, held } = spans.get(w)!;
    if (s.length === 0) continue;
    const workerOf = s.map((x) => processes?.[String(x.process)]?.worker);
    const found: Array<[FaultInEffect, FaultWindow]> = [];
    let unmatched = 0;
    // A server's state outlives a hold: one killed (or its clock moved) after a
    // hold ended and before the next began can be why the next was granted
    // wrongly (F1's restart), so a fault on a server counts between them too.
    const lo = Math.min(...s.map((x) => x.from)), hi = Math.max(...s.map((x) => x.to));
    for (const fault of faults) {
      const { from, to } = fault.window;
      if (from > hi) break;
      if (to < lo) continue;
      // Made only for a fault that hit: most faults miss most witnesses.
      let hit: Set<number> | null = null;
      let missed = false;
      for (let k = 0; k < s.length; k++) {
        const span = s[k], worker = workerOf[k];
        if (from > span.to || to < span.from) continue;
        if (fault.on === "server" || (worker !== undefined && fault.workers.has(worker))) (hit ??= new Set()).add(span.process);
        else if (worker === undefined) missed = true;
      }
      if (hit) found.push([inEffect(fault, [...hit].sort((a, b) => a - b), processes), fault.window]);
      else if (fault.on === "server") found.push([{ ...inEffect(fault, [], processes), between: true }, fault.window]);
      else if (missed) unmatched++;
    }
    if (found.length === 0 && unmatched === 0) continue;
    if (found.length > 0) w.faults = found.map(([f]) => f);
    if (unmatched > 0) w.faults_unmatched = unmatched;
    w.explanation = `${w.explanation} ${faultSentence(found, unmatched, held)}`;
  }
  return warnings;
}

function classify(windows: FaultWindow[], processes: ProcessMap | null): Fault[] {
  const known = knownWorkers(processes);
  return windows.map((window) => ({ window, ...faultReach(window, known) }));
}

/** The workers a run's map names. */
export const knownWorkers = (processes: ProcessMap | null): Set<string> => new Set(Object.values(processes ?? {}).map((p) => p.worker));

/**
 * What a fault was on, and the workers it hit: its targets that are workers, and
 * the workers whose links it hit. A fault on a server, or on a proxy every worker
 * shares, hits every client ("server").
 */
export function faultReach(window: FaultWindow, known: ReadonlySet<string>): { workers: Set<string>; on: FaultInEffect["on"] } {
  const workers = new Set<string>();
  let server = false;
  for (const t of window.targets) {
    const link = linkWorker(t);
    if (link !== null) workers.add(link);
    else if (isWorker(t, known)) workers.add(t);
    else server = true;
  }
  const shared = Array.isArray(window.start?.value?.shared_proxies) && (window.start.value.shared_proxies as unknown[]).length > 0;
  const links = window.targets.some((t) => linkWorker(t) !== null);
  return { workers, on: server || shared ? "server" : links ? "link" : "worker" };
}

function inEffect(fault: Fault, hit: number[], processes: ProcessMap | null): FaultInEffect {
  const w = fault.window;
  // A fault on several workers' links names those of the processes it hit.
  const mine = new Set(hit.map((p) => processes?.[String(p)]?.worker));
  const targets = fault.on === "server" ? w.targets : w.targets.filter((t) => mine.has(linkWorker(t) ?? t));
  return {
    f: w.kind, on: fault.on, targets, processes: hit,
    workers: fault.on === "server" ? [] : [...mine].filter((x): x is string => x !== undefined),
    from_index: w.start?.index ?? null, to_index: w.stop?.index ?? null,
    from_ms: msOf(w.from), to_ms: w.healed ? msOf(w.to) : null,
  };
}

/** Each witness once: under --liveness strict a finding is both an anomaly and a liveness finding. */
function witnessesOf(results: Results): Witness[] {
  const all = new Set<Witness>();
  const add = (list: unknown): void => {
    if (Array.isArray(list)) for (const w of list) if (typeof w === "object" && w !== null && typeof (w as Witness).explanation === "string") all.add(w as Witness);
  };
  for (const list of Object.values(results.anomalies)) add(list);
  for (const list of Object.values(results.liveness?.findings ?? {})) add(list);
  add((results.stats.model as { witnesses?: unknown } | undefined)?.witnesses);
  return [...all];
}

/**
 * The spans of every witness, and whether any of its operations belonged to a
 * hold, found with one lookup per event it names: an
 * invoke by binary search (operations are in invoke order), a completion by its
 * operation's invoke when the witness names both, and only what is left (rare)
 * by one pass over the operations.
 */
function spansOf(m: Paired, witnesses: Witness[]): Map<Witness, { spans: Span[]; held: boolean }> {
  const { ops, holds } = m;
  const wanted = new Set<number>();
  for (const w of witnesses) for (const e of w.events ?? []) wanted.add(e);
  const op = new Map<number, number>();
  for (const e of wanted) {
    const i = invokedAt(m, e);
    if (i >= 0) {
      op.set(e, i);
      if (ops.done[i] >= 0) op.set(ops.done[i], i);
    }
  }
  const notices = new Map(m.notices.map((n) => [n.index, n]));
  const left = new Set([...wanted].filter((e) => !op.has(e) && !notices.has(e)));
  for (let i = 0; i < ops.length && left.size > 0; i++) {
    if (left.delete(ops.done[i])) op.set(ops.done[i], i);
  }
  const end = (i: number): number => (ops.done[i] >= 0 ? ops.doneTime[i] : m.lastTime);
  const spanOf = (i: number): Span => {
    const h = ops.hold[i];
    if (h < 0) return { process: ops.process[i], from: ops.start[i], to: end(i) };
    const a = holds.acquire[h];
    return { process: ops.process[i], from: ops.start[a], to: Math.max(end(a), holds.last[h] >= 0 ? end(holds.last[h]) : -Infinity, end(i)) };
  };
  const decisions = decisionsOf(m, witnesses);
  const out = new Map<Witness, { spans: Span[]; held: boolean }>();
  for (const w of witnesses) {
    const spans: Span[] = [];
    let held = false;
    for (const e of w.events ?? []) {
      const i = op.get(e);
      const n = notices.get(e);
      if (i !== undefined) {
        spans.push(spanOf(i));
        held ||= ops.hold[i] >= 0;
      } else if (n) spans.push({ process: n.process, from: n.time, to: n.time });
    }
    // A decision whose process the events left out counts at the moment it was decided.
    for (const seq of w.seqs ?? []) {
      const d = decisions.get(seq);
      if (d && !spans.some((s) => s.process === d.process)) spans.push({ process: d.process, from: d.time, to: d.time });
    }
    out.set(w, { spans, held });
  }
  return out;
}

/** The operation whose invoke is event `e` (-1: none); by binary search, operations being added in invoke order. */
function invokedAt(m: Paired, e: number): number {
  const inv = m.ops.invoke;
  let lo = 0, hi = m.ops.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (inv[mid] === e) return mid;
    if (inv[mid] < e) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

/** The process and time of each decision the witnesses name, by seq: one pass over the log, and only when a witness names one. */
function decisionsOf(m: Paired, witnesses: Witness[]): Map<number, { process: number; time: number }> {
  const ds = m.decisions;
  const wanted = new Set<number>();
  for (const w of witnesses) for (const s of w.seqs ?? []) wanted.add(s);
  const out = new Map<number, { process: number; time: number }>();
  if (!ds || wanted.size === 0) return out;
  for (let d = 0; d < ds.length && out.size < wanted.size; d++) {
    if (wanted.has(ds.seq[d])) out.set(ds.seq[d], { process: ds.process[d], time: ds.time[d] });
  }
  return out;
}

/** ns on the run's clock to ms, to the µs the explanations quote. */
const msOf = (ns: number): number => Math.round(ns / 1e3) / 1e3;
