// docs/anomalies.md "Liveness" / "stuck-lock", format 2 histories only: per key,
// the stretches when at least one outermost acquire was waiting (from its invoke
// to its completion, or the run's end, the last event's time); within them, a
// gap longer than the threshold in which no hold of the key was busy. A hold is
// busy from its acquire's ok until it was certainly valid or its holder last
// acted (the last invoke of its renews, releases, writes and re-entries),
// whichever is later. The threshold is run.json's TTL plus its command timeout
// (options.workloadOptions.ttlMs + options.commandTimeoutMs); without them, four
// times the largest lease of an acquire (1000 ms where none has one). One finding per gap. The finding
// counts toward the verdict only under --liveness strict (the option, else
// run.json's options.liveness).
import { depthOf, ttlOf } from "./holds.ts";
import { ms, opEvents, opText } from "./describe.ts";
import type { Findings, Hold, Run, Witness } from "./types.ts";

type Stretch = [number, number];

function union(xs: Stretch[]): Stretch[] {
  const out: Stretch[] = [];
  // A stretch of no length stays: a grant at one moment is the key granted then.
  for (const [a, b] of [...xs].filter(([a, b]) => b >= a).sort((x, y) => x[0] - y[0])) {
    const last = out[out.length - 1];
    if (last && a <= last[1]) last[1] = Math.max(last[1], b);
    else out.push([a, b]);
  }
  return out;
}

/** `a` minus the union of `busy`. */
function minus(a: Stretch[], busy: Stretch[]): Stretch[] {
  const out: Stretch[] = [];
  for (const [s, e] of a) {
    let from = s;
    for (const [bs, be] of busy) {
      if (be <= from || bs >= e) continue;
      if (bs > from) out.push([from, bs]);
      from = Math.max(from, be);
    }
    if (from < e) out.push([from, e]);
  }
  return out;
}

export function thresholdNs(run: Run): { ns: number; why: string } {
  const o = run.options as { workloadOptions?: { ttlMs?: unknown }; commandTimeoutMs?: unknown };
  const ttl = o.workloadOptions?.ttlMs;
  const cmd = o.commandTimeoutMs;
  if (typeof ttl === "number" && typeof cmd === "number") return { ns: (ttl + cmd) * 1e6, why: `the ${ttl + cmd} ms a dead holder's lease and a command take` };
  // anomalies.md "stuck-lock": four times the largest lease of an acquire, or of 1000 ms where none has one.
  const most = run.ops.reduce((m, op) => (op.f === "acquire" ? Math.max(m, ttlOf(op) ?? 0) : m), 0) || 1000;
  return { ns: 4 * most * 1e6, why: `four times the largest lease of an acquire, ${4 * most} ms` };
}

export function stuckLock(run: Run, holds: Hold[]): Findings {
  if (run.header.format !== 2) return {};
  const end = run.events.length ? run.events[run.events.length - 1].time : 0;
  const { ns: threshold, why } = thresholdNs(run);
  const out: Witness[] = [];
  for (const key of [...new Set(run.ops.map((op) => op.key))]) {
    const waiters = run.ops.filter((op) => op.key === key && op.f === "acquire" && depthOf(run, op) === 1);
    const waiting = union(waiters.map((op) => [op.invoke.time, op.done ? op.done.time : end] as Stretch));
    const busy = union(
      holds
        .filter((h) => h.key === key)
        .map((h) => {
          // When its holder last acted as the holder: the last invoke of a renew, release, write or re-entry of it.
          const acts = [...h.renews, ...h.releases, ...h.writes, ...h.reentries].map((op) => op.invoke.time);
          const valid = h.spans.length ? h.spans[h.spans.length - 1].end : -Infinity;
          return [h.acquire.done!.time, Math.max(valid, h.acquire.done!.time, ...acts)] as Stretch;
        }),
    );
    for (const [from, to] of minus(waiting, busy)) {
      if (to - from <= threshold) continue;
      const during = waiters.filter((op) => op.invoke.time < to && (op.done ? op.done.time : end) > from);
      const named = during.slice(0, 3);
      const behind = [...new Set(named.map((op) => op.ov.behind).filter((b): b is string => typeof b === "string"))];
      out.push({
        key,
        events: opEvents(...named),
        explanation: `On key ${JSON.stringify(key)} ${during.length} acquire${during.length === 1 ? " was" : "s were"} waiting from ${ms(from)} to ${ms(to)} (${Math.round((to - from) / 1e6)} ms, more than ${why}), and nobody held the key or was granted it: ${named.map((op) => opText(op)).join("; ")}.${behind.length ? ` They waited behind ${behind.map((b) => JSON.stringify(b)).join(", ")}.` : ""}`,
      });
    }
  }
  return out.length ? { "stuck-lock": out } : {};
}
