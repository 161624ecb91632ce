// What the resource accepted: docs/anomalies.md "What the resource accepted"
// (stale-write-accepted, interleaved-writers, false-rejection, lost-update),
// each judged twice: from resource.ndjson in each key's order of decisions, and
// from the history alone (real time). docs/history-format.md "The resource's
// rule per lock kind" says what each kind's rule is; "Committed decisions" what
// a decision of unknown outcome ("accepted": null) does and does not prove;
// "Decisions and the history" how a decision is tied to the write that sent it.
//
// /work/shared/HISTORY.md (amended 2026-11-29): the log can only weaken what the
// history proves. An ok write whose only matching decision says accepted: null
// is unmatched (UNKNOWN at best), and a history that alone proves an anomaly
// stays INVALID whatever the log says. So with a log both are judged: a type's
// witnesses are the log's, and where the log shows none of a type, the
// history's own (the reading the docs leave open; see docs/reference-checker.md).
import { decisionText, opEvents, opText } from "./describe.ts";
import type { Decision, Findings, Kind, Op, Run, Witness } from "./types.ts";

const TYPES = ["stale-write-accepted", "interleaved-writers", "false-rejection", "lost-update"];

const fenceOf = (op: Op): number | null => (typeof op.iv.fence === "number" ? op.iv.fence : null);
const distinctAbove = (fences: number[], f: number): number => new Set(fences.filter((x) => x > f)).size;

/** Ties each decision to the operation that sent it, and counts the ok writes with no accepted decision. */
function matchDecisions(run: Run, decisions: Decision[]): number {
  for (const d of decisions)
    d.sentBy =
      run.ops.find(
        (op) =>
          op.f === d.op &&
          op.key === d.key &&
          op.process === d.process &&
          op.iv.owner === d.owner &&
          op.invoke.time <= d.time &&
          (op.done === null || op.outcome === "info" || d.time <= op.done.time),
      ) ?? null;
  // An ok write is matched by an accepted decision that it sent; failing that
  // (a harness whose clocks disagree), by any accepted decision of its key and
  // owner that no operation brackets. accepted: null never matches (HISTORY.md amended).
  const used = new Set<Decision>();
  const accepted = decisions.filter((d) => d.op === "write" && d.accepted === true);
  let unmatched = 0;
  const okWrites = run.ops.filter((op) => op.f === "write" && op.outcome === "ok");
  const rest: Op[] = [];
  for (const w of okWrites) {
    const d = accepted.find((d) => d.sentBy === w && !used.has(d));
    if (d) used.add(d);
    else rest.push(w);
  }
  for (const w of rest) {
    const d = accepted.find((d) => d.sentBy === null && !used.has(d) && d.key === w.key && d.owner === w.iv.owner);
    if (d) used.add(d);
    else unmatched++;
  }
  return unmatched;
}

/** Each key's decisions in the order they took effect: by "order" where the log has it, a line without one staying after the line logged before it; else line order. */
function byKey(decisions: Decision[]): Map<string, Decision[]> {
  const ordered = decisions.some((d) => d.order !== undefined);
  const keys = new Map<string, Decision[]>();
  for (const d of decisions) keys.set(d.key, [...(keys.get(d.key) ?? []), d]);
  if (!ordered) return keys;
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

/**
 * Whether a write with fence f is stale given the fences that certainly took
 * effect before it (writes; reads where the kind's rule counts them). Returns
 * the fences that make it so, or null.
 */
function staleAgainst(kind: Kind, permits: number, f: number, before: Array<{ fence: number; read: boolean }>): number[] | null {
  if (kind === "semaphore") {
    const above = before.filter((b) => b.fence > f).map((b) => b.fence);
    return new Set(above).size >= permits ? above : null;
  }
  // mutex and reentrant: a read with a higher fence does not count (anomalies.md); rw: reads count (history-format.md).
  const above = before.filter((b) => b.fence > f && (kind === "rw" || !b.read)).map((b) => b.fence);
  return above.length ? above : null;
}

/**
 * Whether a refusal of fence f was false given what may have taken effect
 * before it: `sure` certainly did, `maybe` may have (decisions of unknown
 * outcome; the history's writes not certainly refused). The kinds' rules:
 * mutex, fence above every write and at least every read; reentrant, at least
 * every write and read; rw write, above every write and read; rw read, at least
 * every write; semaphore, fewer than N fences above it.
 */
function falselyRefused(kind: Kind, permits: number, f: number, isRead: boolean, sure: Array<{ fence: number; read: boolean }>, maybe: number[]): boolean {
  if (maybe.some((u) => u >= f) && kind !== "semaphore") return false;
  if (kind === "semaphore") return distinctAbove([...sure.map((s) => s.fence), ...maybe], f) < permits;
  if (kind === "rw" && isRead) return !sure.some((s) => !s.read && s.fence > f);
  return !sure.some((s) => {
    if (s.read) return kind === "rw" ? s.fence >= f : s.fence > f;
    return kind === "reentrant" ? s.fence > f : s.fence >= f;
  });
}

function fromLog(run: Run, decisions: Decision[]): Findings {
  const { lock: kind, permits } = run.header;
  const counter = run.header.workload === "counter";
  const out: Findings = Object.fromEntries(TYPES.map((t) => [t, [] as Witness[]]));
  const events = (...ds: Decision[]) => opEvents(...ds.map((d) => d.sentBy));
  for (const [key, ds] of byKey(decisions)) {
    const k = JSON.stringify(key);
    // stale-write-accepted: a write accepted against the kind's rule by the fences accepted before it.
    const accepted: Decision[] = [];
    // false-rejection needs what may have taken effect too.
    const unknown: Decision[] = [];
    // interleaved-writers: accepted writes since the last decision of unknown outcome.
    let segment: Decision[] = [];
    const pairs = new Set<string>();
    // lost-update: the value in effect, undefined once unknown.
    let value: number | undefined = 0;
    let valueBy: Decision | null = null;
    for (const d of ds) {
      const sure = accepted.filter((a) => a.fence !== null).map((a) => ({ fence: a.fence as number, read: a.op === "read" }));
      if (d.accepted === null) {
        unknown.push(d);
        segment = [];
        if (d.op === "write") value = undefined;
        continue;
      }
      if (d.accepted === false) {
        const judged = d.op === "write" || (kind === "rw" && d.op === "read");
        if (judged && d.fence !== null && falselyRefused(kind, permits, d.fence, d.op === "read", sure, unknown.filter((u) => u.fence !== null).map((u) => u.fence as number))) {
          const top = accepted.filter((a) => a.fence !== null).sort((a, b) => (b.fence as number) - (a.fence as number))[0];
          out["false-rejection"].push({
            key,
            seqs: top ? [top.seq, d.seq] : [d.seq],
            events: top ? events(top, d) : events(d),
            explanation: `On key ${k} the resource refused ${decisionText(d)}, yet ${top ? `the highest fence it had accepted on the key was ${top.fence}, in ${decisionText(top)}` : "it had accepted no fenced request on the key"}: by the ${kind} rule fence ${d.fence} should have been accepted.`,
          });
        }
        continue;
      }
      // accepted === true
      if (d.op === "write" && d.fence !== null) {
        const above = staleAgainst(kind, permits, d.fence, sure);
        if (above) {
          const top = accepted.filter((a) => a.fence === Math.max(...above))[0];
          out["stale-write-accepted"].push({
            key,
            seqs: [top.seq, d.seq],
            events: events(top, d),
            explanation: `On key ${k} the resource accepted ${decisionText(d)} after it had already accepted ${decisionText(top)}: a write with fence ${d.fence} took effect after one with the higher fence ${top.fence}${kind === "semaphore" ? ` (${new Set(above).size} higher fences, the semaphore has ${permits} permits)` : ""}.`,
          });
        }
      }
      if (d.op === "write") {
        const prev = segment[segment.length - 1];
        if (prev && prev.owner !== d.owner) {
          const earlier = segment.slice(0, -1).filter((s) => s.owner === d.owner).pop();
          const pair = JSON.stringify([d.owner, prev.owner].sort());
          if (earlier && !pairs.has(pair) && kind !== "semaphore") {
            pairs.add(pair);
            out["interleaved-writers"].push({
              key,
              seqs: [earlier.seq, prev.seq, d.seq],
              events: events(earlier, prev, d),
              explanation: `On key ${k} writes of hold ${JSON.stringify(d.owner)} and hold ${JSON.stringify(prev.owner)} took effect interleaved: the resource accepted ${decisionText(earlier)}; then ${decisionText(prev)}; then ${decisionText(d)}. Hold ${JSON.stringify(d.owner)} wrote again after another hold had written.`,
            });
          }
        }
        segment.push(d);
        if (counter) {
          if (typeof d.data !== "number") value = undefined;
          else {
            if (value !== undefined && d.data !== value + 1)
              out["lost-update"].push({
                key,
                seqs: valueBy ? [valueBy.seq, d.seq] : [d.seq],
                events: valueBy ? events(valueBy, d) : events(d),
                explanation: `On key ${k} the resource accepted ${decisionText(d)}, but the value in effect before it was ${value}, ${valueBy ? `written by ${decisionText(valueBy)}` : "the key never having been written"}, so it should have written ${value + 1}.`,
              });
            value = d.data;
            valueBy = d;
          }
        }
      }
      accepted.push(d);
    }
  }
  return out;
}

function fromHistory(run: Run): Findings {
  const { lock: kind, permits } = run.header;
  const out: Findings = Object.fromEntries(TYPES.map((t) => [t, [] as Witness[]]));
  const keys = [...new Set(run.ops.map((op) => op.key))];
  const before = (a: Op, b: Op) => a.done !== null && a.outcome !== "info" && a.done.time < b.invoke.time;
  for (const key of keys) {
    const k = JSON.stringify(key);
    const ops = run.ops.filter((op) => op.key === key && (op.f === "write" || op.f === "read"));
    const writes = ops.filter((op) => op.f === "write");
    const okWrites = writes.filter((w) => w.outcome === "ok");
    const fenced = (op: Op) => fenceOf(op) !== null;
    const asFence = (op: Op) => ({ fence: fenceOf(op) as number, read: op.f === "read" });

    // stale-write-accepted: two ok writes with fences, the higher-fenced one completed before the other was invoked.
    for (const w of okWrites.filter(fenced)) {
      const earlier = ops.filter((x) => x !== w && x.outcome === "ok" && fenced(x) && before(x, w));
      const above = staleAgainst(kind, permits, fenceOf(w) as number, earlier.map(asFence));
      if (!above) continue;
      const top = earlier.find((x) => fenceOf(x) === Math.max(...above)) as Op;
      out["stale-write-accepted"].push({
        key,
        events: opEvents(top, w),
        explanation: `On key ${k}, ${opText(top, { data: top.f === "write" })}; then ${opText(w, { data: true })}. The first completed before the second was invoked, so it took effect first, and both took effect (ok): a write with fence ${fenceOf(w)} took effect after one with the higher fence ${fenceOf(top)}.`,
      });
    }

    // interleaved-writers: A's ok write completed before B's ok write was invoked, another of A's ok writes invoked after B's completed.
    if (kind !== "semaphore") {
      // A's first ok write completed before B's write was invoked, and A's last ok write was invoked after B's completed
      // (the two are different writes: a write cannot complete before its own invoke).
      const owners = [...new Set(okWrites.map((w) => w.iv.owner as string))];
      const around = (a: string, b: string): Op[] | null => {
        const as = okWrites.filter((w) => w.iv.owner === a);
        const first = as.reduce((x, y) => (y.done!.time < x.done!.time ? y : x));
        const last = as.reduce((x, y) => (y.invoke.time > x.invoke.time ? y : x));
        const bw = okWrites.find((w) => w.iv.owner === b && before(first, w) && before(w, last));
        return bw ? [first, bw, last] : null;
      };
      for (let i = 0; i < owners.length; i++)
        for (let j = i + 1; j < owners.length; j++) {
          const found = around(owners[i], owners[j]) ?? around(owners[j], owners[i]);
          if (!found) continue;
          const [a1, bw, a2] = found;
          out["interleaved-writers"].push({
            key,
            events: opEvents(a1, bw, a2),
            explanation: `On key ${k} writes of hold ${JSON.stringify(a1.iv.owner)} and hold ${JSON.stringify(bw.iv.owner)} took effect interleaved: ${opText(a1, { data: true })} completed before ${opText(bw, { data: true })} was invoked, which completed before ${opText(a2, { data: true })} was invoked, all ok. Hold ${JSON.stringify(a1.iv.owner)} wrote again after another hold had written.`,
          });
        }
    }

    // false-rejection: refused stale-fence, its fence above (by the kind's rule) every write not certainly refused and invoked before the refusal completed.
    for (const x of ops) {
      if (x.outcome !== "fail" || x.error !== "stale-fence" || !fenced(x)) continue;
      if (x.f === "read" && kind !== "rw") continue;
      const rivals = ops.filter((y) => y !== x && y.outcome !== "fail" && fenced(y) && y.invoke.time < x.done!.time);
      if (!falselyRefused(kind, permits, fenceOf(x) as number, x.f === "read", rivals.map(asFence), [])) continue;
      const top = rivals.filter((y) => y.f === "write").sort((a, b) => (fenceOf(b) as number) - (fenceOf(a) as number))[0];
      out["false-rejection"].push({
        key,
        events: opEvents(top, x),
        explanation: `On key ${k}, ${opText(x, { data: x.f === "write" })} was refused as stale, yet ${top ? `the highest fence of a write that may have taken effect before it was ${fenceOf(top)}, ${opText(top, { data: true })}` : "no fenced write may have taken effect before it"}: by the ${kind} rule fence ${fenceOf(x)} was the newest.`,
      });
    }

    // lost-update (counter): an ok write of v where none of the writes that can have come just before it wrote v - 1.
    if (run.header.workload === "counter") {
      for (const w of okWrites) {
        const v = w.iv.data;
        if (typeof v !== "number") continue;
        const certainlyBefore = okWrites.filter((y) => y !== w && before(y, w));
        // The latest invoke among ok writes that completed before w was invoked: a write that completed before it was certainly followed.
        const lastFollower = Math.max(-Infinity, ...certainlyBefore.map((y) => y.invoke.time));
        const cands = writes.filter((x) => x !== w && x.outcome !== "fail" && x.invoke.time < w.done!.time && !(x.outcome === "ok" && x.done!.time < lastFollower));
        if (cands.some((x) => typeof x.iv.data !== "number")) continue;
        if (cands.some((x) => x.iv.data === v - 1)) continue;
        if (v === 1 && certainlyBefore.length === 0) continue;
        const prev = cands.filter((x) => x.outcome === "ok" && before(x, w)).sort((a, b) => b.done!.time - a.done!.time)[0];
        out["lost-update"].push({
          key,
          events: opEvents(prev, w),
          explanation: `On key ${k}, ${opText(w, { data: true })} took effect, but none of the writes that can have come just before it wrote ${v - 1}${prev ? ` (the last write certainly before it was ${opText(prev, { data: true })})` : ""}, so an increment was lost${certainlyBefore.length === 0 ? ` (a value of ${v} from a key still at 0 is not one more than it)` : ""}.`,
        });
      }
    }
  }
  return out;
}

/** The four types, each from the log where it shows any, else from the history alone; and the reasons the run is not fully checked. */
export function judgeWrites(run: Run): { findings: Findings; unmatched: string[]; counterData: string[] } {
  const unmatched: string[] = [];
  const counterData: string[] = [];
  const hist = fromHistory(run);
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
    const ws = log && log[t].length ? log[t] : hist[t];
    if (ws.length) findings[t] = ws;
  }
  return { findings, unmatched, counterData };
}

