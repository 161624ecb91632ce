// The faults in effect on a witness's holds, as data (a witness's `faults`) and in
// words: the sentence appended to its explanation, in the explanations' own terms
// (processes by number, times in ms on the run's clock, events by index).
import { ms } from "./explain.ts";
import type { FaultWindow } from "./fault-windows.ts";

/** One fault in effect on a witness's holds (results.json, a witness's `faults`). */
export interface FaultInEffect {
  /** pause, partition, latency, clock, kill, or a start event's `f` of another kind. */
  f: string;
  /** What it was on: the worker the processes ran in, that worker's links, or a server (or a proxy every worker shares), which hits everyone. */
  on: "worker" | "link" | "server";
  /** Its targets that hit these processes (all of them for a server's). */
  targets: string[];
  /** The workers of the processes it hit (none for a server's). */
  workers: string[];
  /** The witness's processes whose holds it overlapped and hit. */
  processes: number[];
  /** The `index` of its start and stop events (null: none in the history, never healed). */
  from_index: number | null;
  to_index: number | null;
  from_ms: number;
  /** null: never healed within the history. */
  to_ms: number | null;
  /** A fault on a server that overlapped none of the holds but came between them (`processes` is then empty). */
  between?: true;
}

/** At most this many faults are named in the sentence; `faults` has them all. */
const NAMED = 4;

const list = (xs: readonly string[]): string => (xs.length <= 1 ? (xs[0] ?? "") : `${xs.slice(0, -1).join(", ")} and ${xs[xs.length - 1]}`);
const processesText = (ps: readonly number[]): string => `${ps.length === 1 ? "process" : "processes"} ${list(ps.map(String))}`;

function when(w: FaultWindow): string {
  if (w.from === w.to && (w.start === null || w.stop === null || w.start === w.stop)) return `at ${ms(w.from)}`;
  return w.healed ? `from ${ms(w.from)} to ${ms(w.to)}` : `from ${ms(w.from)} to the end of the history (never healed)`;
}

const num = (v: unknown): number | null => (typeof v === "number" && Number.isFinite(v) ? v : null);
const signed = (x: number): string => `${x > 0 ? "+" : ""}${x} ms`;

/** How a clock fault moved the clock, from its start event. */
function moved(w: FaultWindow): string {
  const offset = num(w.start?.value?.offset_ms);
  if (offset === null) return "moved";
  return w.start?.value?.mode === "strobe" ? `strobed between true time and ${signed(offset)}` : `moved by ${signed(offset)}`;
}

/** The links named by worker: `worker-1's links to redis-1 and resource`. */
function links(targets: readonly string[]): string {
  const byWorker = new Map<string, string[]>();
  for (const t of targets) {
    const at = t.indexOf("->");
    const [w, s] = at > 0 ? [t.slice(0, at), t.slice(at + 2)] : [t, t];
    byWorker.set(w, [...(byWorker.get(w) ?? []), s]);
  }
  return list([...byWorker].map(([w, ss]) => `${w}'s ${ss.length === 1 ? "link" : "links"} to ${list(ss)}`));
}

/**
 * One fault in words, over each of its windows (the same fault on the same
 * processes, more than once): `worker-1 (process 3) was paused from 2100.000 ms
 * to 5300.000 ms and from 6000.000 ms to 6400.000 ms`.
 */
export function faultClause(f: FaultInEffect, ws: readonly FaultWindow[]): string {
  const t = list(ws.map(when));
  const w = ws[0];
  const many = f.targets.length > 1;
  if (f.on === "worker") {
    const who = `${list(f.workers)} (${processesText(f.processes)})`;
    if (f.f === "pause") return `${who} ${f.workers.length > 1 ? "were" : "was"} paused ${t}`;
    if (f.f === "clock") return `the clock of ${who} was ${moved(w)} ${t}`;
    return `${f.f} hit ${who} ${t}`;
  }
  if (f.on === "link" || f.targets.some((x) => x.includes("->"))) {
    const shared = f.on === "server" ? ", through a proxy every worker shares," : ` (${processesText(f.processes)})`;
    const what = `${links(f.targets)}${shared}`;
    const verb = many ? "were" : "was";
    if (f.f === "partition") return `${what} ${verb} cut ${t}`;
    if (f.f === "latency") {
      const lat = num(w.start?.value?.latency_ms);
      return `${what} ${verb} slowed${lat === null ? "" : ` by ${lat} ms`} ${t}`;
    }
    return `${what} had ${f.f} ${t}`;
  }
  const servers = `the ${many ? "servers" : "server"} ${list(f.targets)}`;
  const verb = many ? "were" : "was";
  if (f.f === "kill") {
    const each = ws.map((k) => k.stop === null ? `killed at ${ms(k.from)} and not restarted before the history ended`
      : k.start === null ? `restarted at ${ms(k.to)}` : `killed at ${ms(k.from)} and restarted at ${ms(k.to)}`);
    return `${servers} ${verb} ${each.join(", and ")}`;
  }
  if (f.f === "pause") return `${servers} ${verb} paused ${t}`;
  if (f.f === "clock") return `the clock of ${servers} was ${moved(w)} ${t}`;
  return `${f.f} on ${servers} ${t}`;
}

/** The faults that read as one clause: the same fault, on the same targets and processes, with the same parameters. */
function grouped(found: ReadonlyArray<readonly [FaultInEffect, FaultWindow]>): Array<[FaultInEffect, FaultWindow[]]> {
  const groups = new Map<string, [FaultInEffect, FaultWindow[]]>();
  for (const [f, w] of found) {
    const v = w.start?.value ?? {};
    const key = JSON.stringify([f.f, f.on, f.targets, f.processes, f.between ?? false, v.offset_ms, v.mode, v.latency_ms]);
    const g = groups.get(key);
    if (g) g[1].push(w);
    else groups.set(key, [f, [w]]);
  }
  return [...groups.values()];
}

/**
 * The sentence a witness's explanation ends with. `unmatched`: faults on workers
 * or links that overlapped its holds where run.json did not say which worker ran
 * their processes.
 */
export function faultSentence(found: ReadonlyArray<readonly [FaultInEffect, FaultWindow]>, unmatched: number, held: boolean): string {
  const what = held ? "holds" : "operations";
  const out: string[] = [];
  const say = (intro: string, faults: ReadonlyArray<readonly [FaultInEffect, FaultWindow]>, room: number): void => {
    if (faults.length === 0) return;
    const clauses = grouped(faults);
    const named = clauses.slice(0, Math.max(1, room)).map(([f, ws]) => faultClause(f, ws));
    const more = clauses.slice(named.length).reduce((n, [, ws]) => n + ws.length, 0);
    out.push(`${intro}, ${named.join("; ")}${more > 0 ? `; and ${more} more ${more === 1 ? "fault" : "faults"} (the witness's faults)` : ""}.`);
  };
  const during = found.filter(([f]) => !f.between);
  say(`While these ${what} ${held ? "lasted" : "ran"}`, during, NAMED);
  say(`Between these ${what}`, found.filter(([f]) => f.between), NAMED - grouped(during).length);
  if (unmatched > 0) {
    const n = unmatched === 1 ? "1 fault on a worker or its links" : `${unmatched} faults on workers or their links`;
    out.push(`${n} ${found.length > 0 ? "also overlapped them" : `overlapped ${held ? "these holds" : "these operations"}`}, but run.json does not say which worker ran their processes, so whether ${unmatched === 1 ? "it" : "they"} hit them is not known.`);
  }
  return out.join(" ");
}
