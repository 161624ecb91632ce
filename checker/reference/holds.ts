// The holds and when each was certainly valid, and the anomalies judged from the
// holds alone: docs/anomalies.md "The holds" (mutex-violation,
// expired-on-arrival, lost-lock-unnoticed, orphan-lock-node) and, from "The lock
// kinds", rw-violation and semaphore-overflow, which use the same spans.
//
// Certain validity follows docs/anomalies.md's mutex-violation line
// (amended 2026-11-29): a hold is certainly valid over the union, for its
// acquire and each successful renew, of [that op's ok, its invoke + its TTL],
// cut at the hold's release invoke. A renew whose ok comes after the previous
// span ended starts a new span at its ok; the gap is not certainly valid. A TTL
// is the smaller of the ttl_ms asked for and granted (history-format.md
// "Client operations"); an op with neither gives no span. Kept from
// anomalies.md "mutex-violation" (which the amendment does not contradict): a
// renew with an unknown outcome cuts every span still running at its invoke to
// its invoke + its TTL (it may have set a shorter lease).
import { holdText, ms, opEvents, opText } from "./describe.ts";
import type { Findings, Hold, Op, Run, Span, Witness } from "./types.ts";

export const ttlOf = (op: Op): number | undefined => {
  const ttls = [op.iv.ttl_ms, op.ov.ttl_ms].filter((t): t is number => typeof t === "number");
  return ttls.length ? Math.min(...ttls) : undefined;
};

/** An acquire's depth: history-format.md "Lock kinds": absent is an outermost one; only a reentrant lock has depths. */
export const depthOf = (run: Run, op: Op): number => (run.header.lock === "reentrant" && typeof op.iv.depth === "number" ? op.iv.depth : 1);

export interface HoldIndex {
  holds: Hold[];
  /** Reentrant lock: acquires at depth >= 2 that returned ok and name no hold of their key. */
  strayReentries: Op[];
  /** Outermost acquires that returned an owner another hold of the key already had. */
  duplicateOwners: number;
}

/**
 * Groups operations into holds by (key, owner) (history-format.md "Client
 * operations": the checker groups operations into holds by owner, per key).
 * Where two holds of a key share an owner (an UNKNOWN reason), an operation goes
 * to the latest of them granted before it was invoked.
 */
export function buildHolds(run: Run): HoldIndex {
  const holds: Hold[] = [];
  const byOwner = new Map<string, Hold[]>();
  const id = (key: string, owner: string) => JSON.stringify([key, owner]);
  let duplicateOwners = 0;
  for (const op of run.ops) {
    if (op.f !== "acquire" || op.outcome !== "ok" || depthOf(run, op) > 1) continue;
    const owner = op.ov.owner as string;
    const h: Hold = {
      id: holds.length,
      key: op.key,
      owner,
      fence: typeof op.ov.fence === "number" ? op.ov.fence : null,
      acquire: op,
      process: op.process,
      mode: run.header.lock === "rw" && op.iv.mode === "read" ? "read" : "write",
      renews: [],
      releases: [],
      writes: [],
      reads: [],
      reentries: [],
      spans: [],
    };
    const same = byOwner.get(id(op.key, owner)) ?? [];
    if (same.length) duplicateOwners++;
    same.push(h);
    byOwner.set(id(op.key, owner), same);
    holds.push(h);
  }
  const holdFor = (key: string, owner: unknown, t: number): Hold | undefined => {
    if (typeof owner !== "string") return undefined;
    const same = byOwner.get(id(key, owner)) ?? [];
    const before = same.filter((h) => h.acquire.done!.time <= t);
    return before.length ? before[before.length - 1] : same[0];
  };
  const strayReentries: Op[] = [];
  for (const op of run.ops) {
    if (op.f === "acquire") {
      if (op.outcome !== "ok" || depthOf(run, op) === 1) continue;
      // A re-entry enters a hold whose acquire was invoked before it; one asked
      // before any acquire of its owner has no outer hold (it is stray).
      const same = typeof op.ov.owner === "string" ? (byOwner.get(id(op.key, op.ov.owner)) ?? []) : [];
      const h = same.filter((x) => x.acquire.invoke.time < op.invoke.time).pop();
      if (h) h.reentries.push(op);
      else strayReentries.push(op);
      continue;
    }
    const h = holdFor(op.key, op.iv.owner, op.invoke.time);
    if (!h) continue;
    if (op.f === "renew") h.renews.push(op);
    else if (op.f === "release") h.releases.push(op);
    else if (op.f === "write") h.writes.push(op);
    else if (op.f === "read") h.reads.push(op);
  }
  for (const h of holds) h.spans = spansOf(run, h);
  return { holds, strayReentries, duplicateOwners };
}

/** The release that ends a hold: its first, or under a reentrant lock its first at depth 1 (history-format.md "Lock kinds"). */
export function endingRelease(run: Run, h: Hold): Op | undefined {
  return h.releases.find((r) => run.header.lock !== "reentrant" || !(typeof r.iv.depth === "number" && r.iv.depth > 1));
}

function spansOf(run: Run, h: Hold): Span[] {
  const release = endingRelease(run, h);
  const cut = release ? release.invoke.time : Infinity;
  const raw: Span[] = [];
  for (const op of [h.acquire, ...h.renews.filter((r) => r.outcome === "ok")]) {
    const ttl = ttlOf(op);
    if (ttl === undefined || !op.done) continue;
    raw.push({ start: op.done.time, end: op.invoke.time + ttl * 1e6, from: op, endWhy: `${op.f} #${op.invoke.index} invoked at ${ms(op.invoke.time)} + TTL ${ttl} ms` });
  }
  for (const r of h.renews.filter((r) => r.outcome === "info")) {
    const ttl = ttlOf(r);
    if (ttl === undefined) continue;
    const cap = r.invoke.time + ttl * 1e6;
    for (const s of raw)
      if (s.end > r.invoke.time && cap < s.end) {
        s.end = cap;
        s.endWhy = `renew #${r.invoke.index} with an unknown outcome invoked at ${ms(r.invoke.time)} + TTL ${ttl} ms`;
      }
  }
  for (const s of raw)
    if (release && cut < s.end) {
      s.end = cut;
      s.endWhy = `release #${release.invoke.index} invoked at ${ms(cut)}`;
    }
  const spans: Span[] = [];
  for (const s of raw.filter((s) => s.end > s.start).sort((a, b) => a.start - b.start)) {
    const last = spans[spans.length - 1];
    if (last && s.start <= last.end) {
      if (s.end > last.end) {
        last.end = s.end;
        last.endWhy = s.endWhy;
      }
    } else spans.push({ ...s });
  }
  return spans;
}

/** The first stretch in which both holds were certainly valid, or null. */
export function overlap(a: Hold, b: Hold): { from: number; to: number; sa: Span; sb: Span } | null {
  for (const sa of a.spans)
    for (const sb of b.spans) {
      const from = Math.max(sa.start, sb.start);
      const to = Math.min(sa.end, sb.end);
      if (from < to) return { from, to, sa, sb };
    }
  return null;
}

export const validAt = (h: Hold, t: number): Span | undefined => h.spans.find((s) => s.start <= t && t < s.end);

const byGrant = (a: Hold, b: Hold) => (a.acquire.done!.time - b.acquire.done!.time) || a.acquire.done!.index - b.acquire.done!.index;

function pairEvents(a: Hold, b: Hold, o: { sa: Span; sb: Span }, run: Run): number[] {
  return opEvents(a.acquire, b.acquire, o.sa.from, o.sb.from, endingRelease(run, a), endingRelease(run, b));
}

/**
 * anomalies.md "mutex-violation" (with the amended spans) and
 * "rw-violation": one witness per pair of holds of a key that were both
 * certainly valid at one moment; for an rw lock only pairs with a write hold.
 * `skip` holds pairs already told as a reentrancy-violation.
 */
export function pairViolations(run: Run, holds: Hold[], skip: Set<string>): Findings {
  const kind = run.header.lock;
  if (kind === "semaphore") return {};
  const type = kind === "rw" ? "rw-violation" : "mutex-violation";
  const out: Witness[] = [];
  // Every pair of holds of a key whose spans meet. Holds in order of their first span's start, so that the pairs
  // of a hold end at the first later hold whose spans start after its own have all ended.
  const sorted = holds.filter((h) => h.spans.length).sort((a, b) => a.spans[0].start - b.spans[0].start);
  for (let i = 0; i < sorted.length; i++) {
    const lastEnd = sorted[i].spans[sorted[i].spans.length - 1].end;
    for (let j = i + 1; j < sorted.length && sorted[j].spans[0].start < lastEnd; j++) {
      const [a, b] = [sorted[i], sorted[j]].sort(byGrant);
      if (a.key !== b.key || skip.has(pairKey(a, b))) continue;
      if (kind === "rw" && a.mode === "read" && b.mode === "read") continue;
      const o = overlap(a, b);
      if (!o) continue;
      const what = kind === "rw" ? (a.mode === b.mode ? "two write holds" : "a read hold and a write hold") : "two holds";
      const why = kind === "rw" ? "A read-write lock lets readers share, but a writer must hold alone." : "A correct lock service cannot grant a hold while another's lease is still running.";
      out.push({
        key: a.key,
        events: pairEvents(a, b, o, run),
        explanation: `On key ${JSON.stringify(a.key)} ${what} were certainly valid at once from ${ms(o.from)} to ${ms(o.to)}: ${holdText(a)}; and ${holdText(b)}. ${why}`,
      });
    }
  }
  return out.length ? { [type]: out } : {};
}

export const pairKey = (a: Hold, b: Hold): string => (a.id < b.id ? `${a.id}/${b.id}` : `${b.id}/${a.id}`);

/**
 * anomalies.md "semaphore-overflow": a hold that became certainly valid (its
 * grant, or a late renew's new span) while N other holds of its key were
 * certainly valid. One witness per such grant (a hold's late renew that makes one
 * too many again is a second), naming N + 1 holds.
 */
export function semaphoreOverflow(run: Run, holds: Hold[]): Findings {
  if (run.header.lock !== "semaphore") return {};
  const n = run.header.permits;
  const out: Witness[] = [];
  for (const h of holds)
    for (const s of h.spans) {
      const others = holds.filter((o) => o !== h && o.key === h.key && validAt(o, s.start)).sort(byGrant);
      if (others.length < n) continue;
      const named = [...others.slice(0, n), h];
      const until = Math.min(s.end, ...named.map((o) => validAt(o, s.start)?.end ?? s.end));
      out.push({
        key: h.key,
        events: opEvents(...named.map((o) => o.acquire), s.from),
        explanation: `On key ${JSON.stringify(h.key)} ${others.length + 1} holds were certainly valid at once from ${ms(s.start)} to ${ms(until)}, and the semaphore has ${n} permit${n === 1 ? "" : "s"}: ${named.map(holdText).join("; ")}.`,
      });
    }
  return out.length ? { "semaphore-overflow": out } : {};
}

/**
 * anomalies.md "lost-lock-unnoticed": a renew of H returned ok although another
 * hold's acquire was invoked after H was last granted and returned ok before
 * the renew was invoked. One witness per hold. Judged where two holds exclude
 * each other: any two under a mutex or reentrant lock, a write hold with any
 * under an rw lock; not under a semaphore, whose holds share the key.
 */
export function lostLockUnnoticed(run: Run, holds: Hold[]): Findings {
  const kind = run.header.lock;
  if (kind === "semaphore") return {};
  const out: Witness[] = [];
  // Each key's holds by their acquire's invoke: the holds granted wholly between two moments are a stretch of it.
  const byInvoke = new Map<string, Hold[]>();
  for (const h of holds) {
    if (!byInvoke.has(h.key)) byInvoke.set(h.key, []);
    byInvoke.get(h.key)!.push(h);
  }
  for (const list of byInvoke.values()) list.sort((a, b) => a.acquire.invoke.time - b.acquire.invoke.time);
  for (const h of holds) {
    const others = byInvoke.get(h.key) as Hold[];
    let last = h.acquire.done!.time;
    let lastText = opText(h.acquire, { owner: h.owner, fence: h.fence });
    const renews = h.renews.filter((r) => r.outcome === "ok").sort((a, b) => a.invoke.time - b.invoke.time);
    for (const r of renews) {
      let g: Hold | undefined;
      // Invoked after `last`, and (so) before the renew's invoke, since its ok came before that.
      for (let i = firstInvokedAfter(others, last); i < others.length && others[i].acquire.invoke.time < r.invoke.time && !g; i++) {
        const o = others[i];
        if (o !== h && (kind !== "rw" || o.mode === "write" || h.mode === "write") && o.acquire.done!.time < r.invoke.time) g = o;
      }
      if (g) {
        out.push({
          key: h.key,
          events: opEvents(h.acquire, g.acquire, r),
          explanation: `On key ${JSON.stringify(h.key)}, after its ${lastText}, the lock was granted to another hold: ${opText(g.acquire, { owner: g.owner, fence: g.fence })}, so this hold's lease had run out by ${ms(g.acquire.done!.time)}. Yet ${opText(r)} returned ok under the old owner: the client re-took the lock silently instead of learning it was lost.`,
        });
        break;
      }
      last = r.done!.time;
      lastText = opText(r);
    }
  }
  return out.length ? { "lost-lock-unnoticed": out } : {};
}

/** The first position in `holds` (sorted by acquire invoke) of a hold whose acquire was invoked after t. */
function firstInvokedAfter(holds: Hold[], t: number): number {
  let lo = 0;
  let hi = holds.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (holds[mid].acquire.invoke.time <= t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** anomalies.md "expired-on-arrival": an acquire ok whose value has validity_ms <= 0. One per acquire. */
export function expiredOnArrival(run: Run): Findings {
  const out: Witness[] = [];
  for (const op of run.ops) {
    const v = op.ov.validity_ms;
    if (op.f !== "acquire" || op.outcome !== "ok" || typeof v !== "number" || v > 0) continue;
    const ttl = ttlOf(op);
    out.push({
      key: op.key,
      events: opEvents(op),
      explanation: `On key ${JSON.stringify(op.key)}, ${opText(op)} returned a hold whose lease${ttl === undefined ? "" : ` of ${ttl} ms`} its client reported as already spent (validity_ms ${v}): by the client's own count the lock had expired before the caller got it, yet the acquire said ok.`,
    });
  }
  return out.length ? { "expired-on-arrival": out } : {};
}

/** anomalies.md "orphan-lock-node": an acquire that completed fail with error "orphan-node". One per acquire. */
export function orphanLockNode(run: Run): Findings {
  const out: Witness[] = run.ops
    .filter((op) => op.f === "acquire" && op.outcome === "fail" && op.error === "orphan-node")
    .map((op) => ({
      key: op.key,
      events: opEvents(op),
      explanation: `On key ${JSON.stringify(op.key)}, ${opText(op)}: it waited behind a lock node of its own session that was not this acquire's, a node its client made and lost track of; that node holds the lock for nobody until the session ends.`,
    }));
  return out.length ? { "orphan-lock-node": out } : {};
}
