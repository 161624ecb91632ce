// What the resource accepted: docs/anomalies.md "What the resource accepted"
// (stale-write-accepted, interleaved-writers, false-rejection, lost-update),
// each judged twice: from resource.ndjson in each key's order of decisions, and
// from the history alone (real time). docs/history-format.md "The resource's
// rule per lock kind" says what each kind's rule is; "Committed decisions" what
// a decision of unknown outcome ("accepted": null) does and does not prove;
// "Decisions and the history" how a decision is tied to the write that sent it.
//
// docs/anomalies.md (amended 2026-11-29): the log can only weaken what the
// history proves. An ok write whose only matching decision says accepted: null
// is unmatched (UNKNOWN at best), and a history that alone proves an anomaly
// stays INVALID whatever the log says. So with a log both are judged: a type's
// witnesses are the log's, and where the log shows none of a type, the
// history's own (the reading the docs leave open; see docs/reference-checker.md).
//
// The kinds' rules, as fences that took effect before a write or a refusal
// (history-format.md "The resource's rule per lock kind"):
//   stale    mutex, reentrant: a write fence above it (reads do not count,
//            anomalies.md "stale-write-accepted"); rw: a write or read fence
//            above it; semaphore of N: N distinct fences above it.
//   refused  mutex: fence above every write, at least every read; reentrant:
//   falsely  at least every write and read; rw write: above every write and
//            read; rw read: at least every write; semaphore: fewer than N
//            distinct fences above it. Not where a decision of unknown outcome
//            had a fence at or above it (it may have raised the fence first).
import { decisionText, opEvents, opText } from "./describe.ts";
import type { Decision, Findings, Kind, Op, Run, Witness } from "./types.ts";

const TYPES = ["stale-write-accepted", "interleaved-writers", "false-rejection", "lost-update"];

const fenceOf = (op: Op): number | null => (typeof op.iv.fence === "number" ? op.iv.fence : null);
const distinctAbove = (fences: number[], f: number): number => new Set(fences.filter((x) => x > f)).size;

function groupBy<T>(xs: T[], key: (x: T) => string): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const x of xs) {
    const k = key(x);
    const list = out.get(k);
    if (list) list.push(x);
    else out.set(k, [x]);
  }
  return out;
}

/** What took effect before a write or a refusal, as the rules above need it. -Infinity: nothing. */
interface Before {
  maxWrite: number;
  maxRead: number;
  /** The highest fence of what may have taken effect (decisions of unknown outcome). */
  maxMaybe: number;
  /** Semaphore: every fence that took effect (writes and reads), and those that may have. */
  fences: number[];
  maybeFences: number[];
}

const nothingBefore = (): Before => ({ maxWrite: -Infinity, maxRead: -Infinity, maxMaybe: -Infinity, fences: [], maybeFences: [] });

function isStale(kind: Kind, permits: number, f: number, b: Before): boolean {
  if (kind === "semaphore") return distinctAbove(b.fences, f) >= permits;
  if (kind === "rw") return Math.max(b.maxWrite, b.maxRead) > f;
  return b.maxWrite > f;
}

function isFalseRefusal(kind: Kind, permits: number, f: number, isRead: boolean, b: Before): boolean {
  if (kind === "semaphore") return distinctAbove([...b.fences, ...b.maybeFences], f) < permits;
  if (b.maxMaybe >= f) return false;
  if (kind === "rw") return isRead ? !(b.maxWrite > f) : !(b.maxWrite >= f) && !(b.maxRead >= f);
  if (kind === "reentrant") return !(b.maxWrite > f) && !(b.maxRead > f);
  return !(b.maxWrite >= f) && !(b.maxRead > f);
}

/** Ties each decision to the operation that sent it, and counts the ok writes with no accepted decision. */
function matchDecisions(run: Run, decisions: Decision[]): number {
  const senders = groupBy(
    run.ops.filter((op) => op.f === "write" || op.f === "read"),
    (op) => JSON.stringify([op.f, op.key, op.process, op.iv.owner]),
  );
  for (const d of decisions)
    d.sentBy =
      (senders.get(JSON.stringify([d.op, d.key, d.process, d.owner])) ?? []).find(
        (op) => op.invoke.time <= d.time && (op.done === null || op.outcome === "info" || d.time <= op.done.time),
      ) ?? null;
  // An ok write is matched by an accepted decision that it sent; failing that
  // (a harness whose clocks disagree), by an accepted decision of its key and
  // owner that no operation brackets. accepted: null never matches (amended 2026-11-29).
  const accepted = decisions.filter((d) => d.op === "write" && d.accepted === true);
  const matched = new Set(accepted.map((d) => d.sentBy));
  const spare = groupBy(
    accepted.filter((d) => d.sentBy === null),
    (d) => JSON.stringify([d.key, d.owner]),
  );
  let unmatched = 0;
  for (const w of run.ops) {
    if (w.f !== "write" || w.outcome !== "ok" || matched.has(w)) continue;
    const pool = spare.get(JSON.stringify([w.key, w.iv.owner]));
    if (pool && pool.length) pool.shift();
    else unmatched++;
  }
  return unmatched;
}

/** Each key's decisions in the order they took effect: by "order" where the log has it, a line without one staying after the line logged before it; else line order. */
function byKey(decisions: Decision[]): Map<string, Decision[]> {
  const keys = groupBy(decisions, (d) => d.key);
  if (!decisions.some((d) => d.order !== undefined)) return keys;
  for (const [key, ds] of keys) {
    let place = -Infinity;
    let after = 0;
    const sortKey = new Map<Decision, [number, number]>();
    for (const d of ds) {
      if (typeof d.order === "number") {
        place = d.order;
        after = 0;
        sortKey.set(d, [place, 0]);
      } else sortKey.set(d, [place, ++after]);
    }
    keys.set(
      key,
      [...ds].sort((a, b) => sortKey.get(a)![0] - sortKey.get(b)![0] || sortKey.get(a)![1] - sortKey.get(b)![1] || a.line - b.line),
    );
  }
  return keys;
}

/** The first position in `ops` (sorted by invoke) of an op invoked at or after t. */
function firstInvokedFrom(ops: Op[], t: number): number {
  let lo = 0;
  let hi = ops.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (ops[mid].invoke.time < t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

const empty = (): Findings => Object.fromEntries(TYPES.map((t) => [t, [] as Witness[]]));

// What a witness judges, so that the log's and the history's witnesses of one
// thing are told once (anomalies.md "What the resource accepted": the log can add
// to what the history proves, never take it away): a write (its invoke's index),
// or for interleaved-writers the ordered pair of holds.
const subjects = new WeakMap<Witness, string>();
const about = (w: Witness, subject: string): Witness => (subjects.set(w, subject), w);
const writeOf = (op: Op | null | undefined, seq?: number): string => (op ? `op ${op.invoke.index}` : `seq ${seq}`);

function fromLog(run: Run, decisions: Decision[]): Findings {
  const { lock: kind, permits } = run.header;
  const counter = run.header.workload === "counter";
  const out = empty();
  const events = (...ds: Decision[]) => opEvents(...ds.map((d) => d.sentBy));
  for (const [key, ds] of byKey(decisions)) {
    const k = JSON.stringify(key);
    const b = nothingBefore();
    // A decision of unknown outcome has no place (its order is null): it may have
    // taken effect before any decision of its key, so a refusal at or below its
    // fence is never a false rejection (history-format.md, committed decisions).
    for (const d of ds) if (d.accepted === null && d.fence !== null) (b.maxMaybe = Math.max(b.maxMaybe, d.fence)), b.maybeFences.push(d.fence);
    // The accepted decision with the highest fence, for witnesses.
    let top: Decision | null = null;
    // interleaved-writers: the last accepted write, and each hold's last.
    const lastOf = new Map<string, Decision>();
    const accepted: Decision[] = [];
    const placeOf = new Map<Decision, number>();
    const pairs = new Set<string>();
    // lost-update: the value in effect (undefined once unknown) and who wrote it.
    let value: number | undefined = 0;
    let valueBy: Decision | null = null;
    for (const d of ds) {
      const f = d.fence;
      if (d.accepted === null) {
        if (f !== null) {
          b.maxMaybe = Math.max(b.maxMaybe, f);
          b.maybeFences.push(f);
        }
        // It proves no interleaving, and hides none either (history-format.md, committed decisions).
        if (d.op === "write") value = undefined;
        continue;
      }
      if (d.accepted === false) {
        const judged = d.op === "write" || (kind === "rw" && d.op === "read");
        if (judged && f !== null && isFalseRefusal(kind, permits, f, d.op === "read", b))
          out["false-rejection"].push(about({
            key,
            seqs: top ? [top.seq, d.seq] : [d.seq],
            events: top ? events(top, d) : events(d),
            explanation: `On key ${k} the resource refused ${decisionText(d)}, yet ${top ? `the highest fence it had accepted on the key was ${top.fence}, in ${decisionText(top)}` : "it had accepted no fenced request on the key"}: by the ${kind} rule fence ${f} should have been accepted.`,
          }, writeOf(d.sentBy, d.seq)));
        continue;
      }
      // Accepted.
      if (d.op === "write") {
        if (f !== null && isStale(kind, permits, f, b) && top)
          out["stale-write-accepted"].push(about({
            key,
            seqs: [top.seq, d.seq],
            events: events(top, d),
            explanation: `On key ${k} the resource accepted ${decisionText(d)} after it had already accepted ${decisionText(top)}: a write with fence ${f} took effect after one with the higher fence ${top.fence}${kind === "semaphore" ? ` (${distinctAbove(b.fences, f)} higher fences; the semaphore has ${permits} permits)` : ""}.`,
          }, writeOf(d.sentBy, d.seq)));
        // interleaved-writers: every other hold with an accepted write between A's last one and this one (A, B, A).
        const earlier = lastOf.get(d.owner);
        if (kind !== "semaphore" && earlier)
          for (const between of accepted.slice(placeOf.get(earlier)! + 1)) {
            // (A, B) is ordered: A the hold that wrote again, B the hold it wrote around.
            const pair = JSON.stringify([d.owner, between.owner]);
            if (between.owner === d.owner || pairs.has(pair)) continue;
            pairs.add(pair);
            out["interleaved-writers"].push(about({
              key,
              seqs: [earlier.seq, between.seq, d.seq],
              events: events(earlier, between, d),
              explanation: `On key ${k} writes of hold ${JSON.stringify(d.owner)} and hold ${JSON.stringify(between.owner)} took effect interleaved: the resource accepted ${decisionText(earlier)}; then ${decisionText(between)}; then ${decisionText(d)}. Hold ${JSON.stringify(d.owner)} wrote again after another hold had written.`,
            }, `pair ${key} ${pair}`));
          }
        placeOf.set(d, accepted.length);
        accepted.push(d);

        lastOf.set(d.owner, d);
        if (counter) {
          if (typeof d.data !== "number") value = undefined;
          else {
            if (value !== undefined && d.data !== value + 1)
              out["lost-update"].push(about({
                key,
                seqs: valueBy ? [valueBy.seq, d.seq] : [d.seq],
                events: valueBy ? events(valueBy, d) : events(d),
                explanation: `On key ${k} the resource accepted ${decisionText(d)}, but the value in effect before it was ${value}, ${valueBy ? `written by ${decisionText(valueBy)}` : "the key never having been written"}, so it should have written ${value + 1}.`,
              }, writeOf(d.sentBy, d.seq)));
            value = d.data;
            valueBy = d;
          }
        }
      }
      if (f !== null) {
        // A read counts for the kinds whose rule reads it (isStale, isFalseRefusal); the witness names the highest fence that counts.
        if (d.op === "write") b.maxWrite = Math.max(b.maxWrite, f);
        else b.maxRead = Math.max(b.maxRead, f);
        b.fences.push(f);
        const counts = d.op === "write" || kind === "rw" || kind === "semaphore";
        if (counts && (!top || f > (top.fence as number))) top = d;
      }
    }
  }
  return out;
}

function fromHistory(run: Run): Findings {
  const { lock: kind, permits } = run.header;
  const out = empty();
  const before = (a: Op, b: Op) => a.done !== null && a.outcome !== "info" && a.done.time < b.invoke.time;
  const byKeyOps = groupBy(
    run.ops.filter((op) => op.f === "write" || op.f === "read"),
    (op) => op.key,
  );
  for (const [key, ops] of byKeyOps) {
    const k = JSON.stringify(key);
    const writes = ops.filter((op) => op.f === "write");
    const okWrites = writes.filter((w) => w.outcome === "ok");
    const fenced = (op: Op) => fenceOf(op) !== null;
    const counts = (op: Op) => op.f === "write" || kind === "rw" || kind === "semaphore";

    // stale-write-accepted: an ok write, and ok writes with fences that completed before it was invoked (anomalies.md
    // speaks of two writes; reads are not judged from the history alone). One sweep: writes by completion, by invoke.
    const done = okWrites.filter(fenced).sort((a, b) => a.done!.time - b.done!.time);
    const b = nothingBefore();
    let top: Op | null = null;
    let next = 0;
    // Under an rw lock or a semaphore the kind's rule is judged from the log only (history-format.md, "The resource's rule per lock kind").
    const byRule = kind === "rw" || kind === "semaphore";
    for (const w of byRule ? [] : okWrites.filter(fenced).sort((a, b) => a.invoke.time - b.invoke.time)) {
      for (; next < done.length && done[next].done!.time < w.invoke.time; next++) {
        const x = done[next];
        const f = fenceOf(x) as number;
        b.maxWrite = Math.max(b.maxWrite, f);
        b.fences.push(f);
        if (!top || f > (fenceOf(top) as number)) top = x;
      }
      if (!top || !isStale(kind, permits, fenceOf(w) as number, b)) continue;
      out["stale-write-accepted"].push(about({
        key,
        events: opEvents(top, w),
        explanation: `On key ${k}, ${opText(top, { data: true })}; then ${opText(w, { data: true })}. The first completed before the second was invoked, so it took effect first, and both took effect (ok): a write with fence ${fenceOf(w)} took effect after one with the higher fence ${fenceOf(top)}.`,
      }, writeOf(w)));
    }

    // interleaved-writers: A's first ok write completed before B's ok write was invoked, and A's last ok write was
    // invoked after B's completed (they are two writes: a write cannot complete before its own invoke).
    if (kind !== "semaphore")
      for (const [a, as] of groupBy(okWrites, (w) => w.iv.owner as string)) {
        if (as.length < 2) continue;
        const first = as.reduce((x, y) => (y.done!.time < x.done!.time ? y : x));
        const last = as.reduce((x, y) => (y.invoke.time > x.invoke.time ? y : x));
        const told = new Set<string>();
        for (const bw of okWrites) {
          const bOwner = bw.iv.owner as string;
          if (bOwner === a || told.has(bOwner) || !before(first, bw) || !before(bw, last)) continue;
          told.add(bOwner);
          out["interleaved-writers"].push(about({
            key,
            events: opEvents(first, bw, last),
            explanation: `On key ${k} writes of hold ${JSON.stringify(a)} and hold ${JSON.stringify(bOwner)} took effect interleaved: ${opText(first, { data: true })} completed before ${opText(bw, { data: true })} was invoked, which completed before ${opText(last, { data: true })} was invoked, all ok. Hold ${JSON.stringify(a)} wrote again after another hold had written.`,
          }, `pair ${key} ${JSON.stringify([a, bOwner])}`));
        }
      }

    // false-rejection: a write refused as stale, its fence passing the kind's rule against every write and fenced read
    // of the key that was not certainly refused and was invoked before the refusal completed. (A refused read is judged
    // from the log only: anomalies.md's rule from the history alone names writes.) Not in a history that may lack
    // writes (run.json history_complete false: a trace), since the proof is that no higher fence is in it.
    for (const x of byRule || !run.complete ? [] : writes) {
      if (x.outcome !== "fail" || x.error !== "stale-fence" || !fenced(x)) continue;
      const rivals = ops.filter((y) => y !== x && y.outcome !== "fail" && fenced(y) && y.invoke.time < x.done!.time);
      const rb = nothingBefore();
      for (const y of rivals) {
        if (y.f === "write") rb.maxWrite = Math.max(rb.maxWrite, fenceOf(y) as number);
        else rb.maxRead = Math.max(rb.maxRead, fenceOf(y) as number);
        if (counts(y)) rb.fences.push(fenceOf(y) as number);
      }
      if (!isFalseRefusal(kind, permits, fenceOf(x) as number, false, rb)) continue;
      const topW = rivals.filter((y) => y.f === "write").sort((p, q) => (fenceOf(q) as number) - (fenceOf(p) as number))[0];
      out["false-rejection"].push(about({
        key,
        events: opEvents(topW, x),
        explanation: `On key ${k}, ${opText(x, { data: true })} was refused as stale, yet ${topW ? `the highest fence of a write that may have taken effect before it was ${fenceOf(topW)}, ${opText(topW, { data: true })}` : "no fenced write may have taken effect before it"}: by the ${kind} rule fence ${fenceOf(x)} was the newest.`,
      }, writeOf(x)));
    }

    // lost-update (counter): an ok write of v where none of the writes that can have come just before it wrote v - 1:
    // writes not certainly refused and invoked before it completed, but those certainly followed by another ok write
    // before it was invoked. With no ok write certainly before it, the key may still have held 0, and v = 1 is fine.
    if (run.header.workload === "counter") {
      // One sweep over the ok writes by invoke, taking in those completed before each (by completion): the latest
      // invoke among them, `lastFollower` (a write completed before it was certainly followed by that write), and
      // the last of them to complete, `prev`, for the witness.
      const byDone = [...okWrites].sort((a, b) => a.done!.time - b.done!.time);
      const byInvoke = [...okWrites].sort((a, b) => a.invoke.time - b.invoke.time);
      // An ok write that completed at or after lastFollower was invoked at most `longest` before it.
      const longest = okWrites.reduce((m, x) => Math.max(m, x.done!.time - x.invoke.time), 0);
      const unknownWrites = writes.filter((x) => x.outcome === "info");
      let lastFollower = -Infinity;
      let prev: Op | null = null;
      let next = 0;
      for (const w of byInvoke) {
        for (; next < byDone.length && byDone[next].done!.time < w.invoke.time; next++) {
          lastFollower = Math.max(lastFollower, byDone[next].invoke.time);
          prev = byDone[next];
        }
        const v = w.iv.data;
        if (typeof v !== "number") continue;
        const cands = [
          ...unknownWrites.filter((x) => x.invoke.time < w.done!.time),
        ];
        for (let i = firstInvokedFrom(byInvoke, lastFollower - longest); i < byInvoke.length && byInvoke[i].invoke.time < w.done!.time; i++)
          if (byInvoke[i] !== w && byInvoke[i].done!.time >= lastFollower) cands.push(byInvoke[i]);
        if (cands.some((x) => typeof x.iv.data !== "number")) continue;
        if (cands.some((x) => x.iv.data === v - 1)) continue;
        if (v === 1 && prev === null) continue;
        out["lost-update"].push(about({
          key,
          events: opEvents(prev, w),
          explanation: `On key ${k}, ${opText(w, { data: true })} took effect, but none of the writes that can have come just before it wrote ${v - 1}${prev ? ` (the last write certainly before it was ${opText(prev, { data: true })})` : ` (the key may still have held 0, and ${v} is not 1)`}, so an increment was lost.`,
        }, writeOf(w)));
      }
    }
  }
  return out;
}

/**
 * The four types: the log's witnesses, and beside them each of the history's
 * whose subject (the write it judges, or the pair of holds) the log's do not
 * judge; and the reasons the run is not fully checked.
 */
export function judgeWrites(run: Run): { findings: Findings; unmatched: string[]; counterData: string[] } {
  const unmatched: string[] = [];
  const counterData: string[] = [];
  // Clocks that may be off (clocks.ts), with a log: the writes' times are the clocks', so the log alone speaks.
  const hist = run.placed && run.decisions ? empty() : fromHistory(run);
  let log: Findings | null = null;
  if (run.decisions) {
    const n = matchDecisions(run, run.decisions);
    if (n > 0) unmatched.push(`${n} writes completed ok in the history but resource.ndjson has no accepted decision for them`);
    log = fromLog(run, run.decisions);
  }
  if (run.header.workload === "counter") {
    const odd = run.ops.filter((op) => op.f === "write" && op.outcome !== "fail" && typeof op.iv.data !== "number").length;
    if (odd > 0) counterData.push(`${odd} counter writes carry data that is not a number, so lost updates around them cannot be judged`);
  }
  const findings: Findings = {};
  for (const t of TYPES) {
    const told = new Set((log?.[t] ?? []).map((w) => subjects.get(w)));
    const ws = [...(log?.[t] ?? []), ...hist[t].filter((w) => !told.has(subjects.get(w)))];
    if (ws.length) findings[t] = ws;
  }
  return { findings, unmatched, counterData };
}
