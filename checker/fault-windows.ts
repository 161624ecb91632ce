// Fault windows from nemesis events. docs/history-format.md records each fault as a
// start and a stop event (`start-X`/`stop-X`, `bump-clock`/`reset-clock`,
// `kill`/`restart`); a window is the time between them: what the report shades,
// and what a witness's holds are compared with (faults-in-effect.ts).
// A fault never healed within the history runs to its end; a nemesis event that
// pairs with nothing is kept as an instant so it is still seen to have happened.
import type { HistoryEvent } from "../store/events.ts";

export interface FaultWindow {
  /** `pause`, `partition`, `latency`, `clock`, `kill`, or the event's `f` for others. */
  kind: string;
  from: number;
  to: number;
  start: HistoryEvent | null;
  stop: HistoryEvent | null;
  targets: string[];
  /** false: the fault was still in effect when the history ended. */
  healed: boolean;
}

type Half = { kind: string; starts: boolean };

function half(f: string): Half | null {
  if (f.startsWith("start-")) return { kind: f.slice(6), starts: true };
  if (f.startsWith("stop-")) return { kind: f.slice(5), starts: false };
  if (f === "bump-clock") return { kind: "clock", starts: true };
  if (f === "reset-clock") return { kind: "clock", starts: false };
  if (f === "kill") return { kind: "kill", starts: true };
  if (f === "restart") return { kind: "kill", starts: false };
  return null;
}

/** The fault a nemesis `f` starts or stops (`start-pause` -> `pause`), or `f` itself. */
export function faultKind(f: string): string {
  return half(f)?.kind ?? f;
}

function targetsOf(e: HistoryEvent): string[] {
  const t = e.value?.targets;
  if (Array.isArray(t)) return t.map(String);
  return typeof t === "string" ? [t] : [];
}

const sameTargets = (a: string[], b: string[]) =>
  a.length === b.length && [...a].sort().join("\u0000") === [...b].sort().join("\u0000");

export function faultWindows(events: readonly HistoryEvent[], end: number): FaultWindow[] {
  const nemesis = events.filter((e) => e.process === "nemesis");
  if (!inOrder(nemesis)) nemesis.sort((a, b) => a.time - b.time || a.index - b.index);
  const windows: FaultWindow[] = [];
  const open = new Map<string, FaultWindow[]>();
  nemesis.forEach((e, i) => {
    // Jepsen-style nemeses log an invoke before the info; the pair is one event here.
    const next = nemesis[i + 1];
    if (e.type === "invoke" && next && next.f === e.f && next.type !== "invoke") return;
    const h = half(e.f);
    const targets = targetsOf(e);
    if (!h) {
      windows.push({ kind: e.f, from: e.time, to: e.time, start: e, stop: e, targets, healed: true });
      return;
    }
    const list = open.get(h.kind) ?? [];
    if (h.starts) {
      const w: FaultWindow = { kind: h.kind, from: e.time, to: end, start: e, stop: null, targets, healed: false };
      windows.push(w);
      list.push(w);
      open.set(h.kind, list);
      return;
    }
    // A stop naming the same targets heals that window; a stop naming none (or other
    // targets) heals every open window of its kind, as "heal all" nemeses do.
    const match = list.find((w) => targets.length > 0 && sameTargets(w.targets, targets));
    const healed = match ? [match] : list.splice(0);
    if (match) list.splice(list.indexOf(match), 1);
    if (healed.length === 0) {
      windows.push({ kind: h.kind, from: e.time, to: e.time, start: null, stop: e, targets, healed: true });
    }
    for (const w of healed) {
      w.to = e.time;
      w.stop = e;
      w.healed = true;
    }
  });
  return windows.sort((a, b) => a.from - b.from);
}

const inOrder = (es: readonly HistoryEvent[]): boolean => es.every((e, i) => i === 0 || es[i - 1].time < e.time || (es[i - 1].time === e.time && es[i - 1].index <= e.index));
