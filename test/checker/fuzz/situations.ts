// Situations a generated run shows, read from its history and resource log (not
// from what the generator meant to do), for the coverage table and for the test
// that the generator makes each of them. The first four are the amended rules of
// docs/anomalies.md ("Changed on 2026-11-29"), each a bug
// the fast checker had:
//   (a) null-ok-stale: an ok write whose only matching resource line says
//       accepted: null, while the history's ok writes alone prove a stale write
//       that write takes part in;
//   (b) late-renew-after-grant: a renew answered ok although its hold's lease had
//       certainly run out before it was sent, and another hold of the key was
//       granted between the hold's last grant and the renew;
//   (c) reentry-without-outer: a reentrant acquire at depth n > 1 granted to a
//       process that does not hold that owner at depth n - 1: another process's
//       hold (reentry-of-another-process), or no hold at all
//       (reentry-with-no-outer-hold); and reentry-after-lease, a re-entry granted
//       to the holder once its hold was no longer certainly valid (its lease had
//       run out: the rule asks for a hold certainly valid);
//   (d) order-not-line-order: committed decisions whose `order` differs from the
//       order of their lines.
// The others say the generator reached the ground the brief asks for.
import type { HistoryEvent, HistoryHeader, ResourceDecision } from "../../../store/events.ts";

export const SITUATIONS = [
  "null-ok-stale",
  "late-renew-after-grant",
  "reentry-without-outer",
  "reentry-of-another-process",
  "reentry-with-no-outer-hold",
  "reentry-after-lease",
  "order-not-line-order",
  "late-renew",
  "early-renew",
  "lease-ran-out-in-hold",
  "reentry",
  "rw-read-and-write",
  "semaphore-shared",
  "cancelled",
  "cancel-unknown",
  "lost-notice",
  "null-fence",
  "accepted-null",
  "info",
  "open-at-end",
  "nemesis",
  // run.json's clock bounds (checker/clock.ts), and a case where they made a finding only possible.
  "clock-bounds",
  "possible-only",
] as const;
export type Situation = (typeof SITUATIONS)[number];

interface Op {
  process: number;
  f: string;
  key: string;
  invoke: HistoryEvent;
  done: HistoryEvent | null;
}

/** Operations by their invoke, paired with their completion. */
function operations(events: HistoryEvent[]): Op[] {
  const open = new Map<number, Op>();
  const ops: Op[] = [];
  for (const e of events) {
    if (typeof e.process !== "number" || e.type === "notice") continue;
    if (e.type === "invoke") {
      const op: Op = { process: e.process, f: e.f, key: e.key!, invoke: e, done: null };
      open.set(e.process, op);
      ops.push(op);
    } else {
      const op = open.get(e.process);
      if (op) op.done = e;
      open.delete(e.process);
    }
  }
  return ops;
}

const num = (v: unknown): number | null => (typeof v === "number" ? v : null);
const ok = (op: Op): boolean => op.done?.type === "ok";
/** The lease an acquire or renew set: the smaller TTL of its invoke and its ok. */
function ttlOf(op: Op): number | null {
  const a = num(op.invoke.value?.ttl_ms), b = num(op.done?.value?.ttl_ms);
  return a === null ? b : b === null ? a : Math.min(a, b);
}

/** The situations of one run, from its events in time order and its resource log (file order; null: none). */
export function situationsOf(header: HistoryHeader, events: HistoryEvent[], decisions: ResourceDecision[] | null): Set<Situation> {
  const found = new Set<Situation>();
  const ops = operations(events);
  const acquires = ops.filter((o) => o.f === "acquire");

  // (a) An ok write matched only by accepted: null lines, in a stale pair the history proves alone.
  if (decisions) {
    const writes = ops.filter((o) => o.f === "write" && ok(o));
    const matches = (w: Op): ResourceDecision[] =>
      decisions.filter((d) => d.op === "write" && d.key === w.key && d.process === w.process && d.owner === w.invoke.value?.owner && d.time > w.invoke.time && d.time < w.done!.time);
    const nullOnly = new Set(writes.filter((w) => { const m = matches(w); return m.length > 0 && m.every((d) => d.accepted === null); }));
    if (nullOnly.size > 0) found.add("accepted-null");
    for (const hi of writes)
      for (const lo of writes) {
        const fh = num(hi.invoke.value?.fence), fl = num(lo.invoke.value?.fence);
        if (hi.key === lo.key && fh !== null && fl !== null && fh > fl && hi.done!.time < lo.invoke.time && (nullOnly.has(hi) || nullOnly.has(lo))) found.add("null-ok-stale");
      }
    if (decisions.some((d) => d.accepted === null)) found.add("accepted-null");
    // (d) A key's places, read in line order, not rising.
    const lastOrder = new Map<string, number>();
    for (const d of decisions) {
      if (typeof d.order !== "number") continue;
      if ((lastOrder.get(d.key) ?? 0) > d.order) found.add("order-not-line-order");
      lastOrder.set(d.key, d.order);
    }
  }

  // (b) Renews against their hold's last grant and the grants of others.
  const holdsByOwner = new Map<string, Op>();
  for (const a of acquires) if (ok(a) && num(a.invoke.value?.depth ?? 1) === 1) holdsByOwner.set(`${a.key}\u0000${a.done!.value?.owner}`, a);
  const lastGrant = new Map<Op, { ok: number; end: number | null }>();
  for (const a of holdsByOwner.values()) {
    const ttl = ttlOf(a);
    lastGrant.set(a, { ok: a.done!.time, end: ttl === null ? null : a.invoke.time + ttl * 1e6 });
  }
  for (const r of ops) {
    if (r.f !== "renew" || !ok(r)) continue;
    const hold = holdsByOwner.get(`${r.key}\u0000${r.invoke.value?.owner}`);
    const last = hold && lastGrant.get(hold);
    if (!hold || !last) continue;
    if (last.end !== null && r.invoke.time > last.end) {
      found.add("late-renew");
      const other = acquires.some((a) => a !== hold && a.key === r.key && ok(a) && a.done!.value?.owner !== hold.done!.value?.owner && a.done!.time > last.ok && a.done!.time < r.invoke.time);
      if (other) found.add("late-renew-after-grant");
    } else found.add("early-renew");
    const ttl = ttlOf(r);
    lastGrant.set(hold, { ok: r.done!.time, end: ttl === null ? null : r.invoke.time + ttl * 1e6 });
  }
  // A holder that acted after its lease had certainly run out.
  for (const [hold, g] of lastGrant)
    if (g.end !== null && ops.some((o) => o.process === hold.process && o.key === hold.key && o.invoke.value?.owner === hold.done!.value?.owner && o.invoke.time > g.end!)) found.add("lease-ran-out-in-hold");

  // (c) Re-entries against the depth each process holds each owner at, and the spans
  // in which the hold is certainly valid (from an acquire's or renew's ok to its
  // invoke plus its TTL, cut at the outermost release; a re-entry's lease not credited).
  if (header.lock === "reentrant") {
    const depth = new Map<string, number>();
    const spans = new Map<string, [number, number][]>();
    const at = (process: number, key: string, owner: unknown): string => `${process}\u0000${key}\u0000${String(owner)}`;
    const hold = (key: string, owner: unknown): string => `${key}\u0000${String(owner)}`;
    const span = (o: Op, owner: unknown): void => {
      const ttl = ttlOf(o);
      if (ttl === null) return;
      const list = spans.get(hold(o.key, owner)) ?? [];
      list.push([o.done!.time, o.invoke.time + ttl * 1e6]);
      spans.set(hold(o.key, owner), list);
    };
    for (const o of ops) {
      if (!ok(o) && !(o.f === "release" && (num(o.invoke.value?.depth) ?? 1) === 1)) continue;
      const d = num(o.invoke.value?.depth) ?? 1;
      if (o.f === "acquire") {
        const owner = o.done!.value?.owner;
        const k = at(o.process, o.key, owner);
        if (d > 1) {
          found.add("reentry");
          if ((depth.get(k) ?? 0) !== d - 1) {
            found.add("reentry-without-outer");
            const elsewhere = [...depth].some(([other, n]) => other !== k && other.endsWith(`\u0000${o.key}\u0000${String(owner)}`) && n >= 1);
            found.add(elsewhere ? "reentry-of-another-process" : "reentry-with-no-outer-hold");
          } else if (!(spans.get(hold(o.key, owner)) ?? []).some(([from, to]) => from <= o.done!.time && o.done!.time < to)) found.add("reentry-after-lease");
        } else span(o, owner);
        depth.set(k, d);
      } else if (o.f === "renew") span(o, o.invoke.value?.owner);
      else if (o.f === "release") {
        const owner = o.invoke.value?.owner;
        if (ok(o)) depth.set(at(o.process, o.key, owner), d - 1);
        // The outermost release ends every span of the hold where it was invoked.
        if (d === 1) spans.set(hold(o.key, owner), (spans.get(hold(o.key, owner)) ?? []).map(([from, to]): [number, number] => [from, Math.min(to, o.invoke.time)]));
      }
    }
  }

  if (header.lock === "rw") {
    const modes = new Set(acquires.filter(ok).map((a) => a.invoke.value?.mode ?? "write"));
    if (modes.size > 1) found.add("rw-read-and-write");
  }
  if (header.lock === "semaphore" && num(header.permits)! > 1) {
    const oks = acquires.filter(ok);
    if (oks.some((a) => oks.some((b) => b !== a && b.key === a.key && b.done!.time > a.done!.time && holdsUntil(ops, a) > b.done!.time))) found.add("semaphore-shared");
  }
  for (const e of events) {
    if (e.error === "cancelled") found.add("cancelled");
    if (e.error === "cancel-unknown") found.add("cancel-unknown");
    if (e.type === "notice" && e.f === "lost") found.add("lost-notice");
    if (e.process === "nemesis") found.add("nemesis");
    if (e.type === "info" && e.process !== "nemesis") found.add("info");
    if (e.type === "ok" && e.f === "acquire" && e.value?.fence === null) found.add("null-fence");
  }
  if (ops.some((o) => o.done === null)) found.add("open-at-end");
  return found;
}

/** When a hold's release was invoked (Infinity: never). */
function holdsUntil(ops: Op[], a: Op): number {
  const owner = a.done!.value?.owner;
  const r = ops.find((o) => o.f === "release" && o.key === a.key && o.invoke.value?.owner === owner);
  return r ? r.invoke.time : Infinity;
}
