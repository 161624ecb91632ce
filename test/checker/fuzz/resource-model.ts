// The protected resource of a fuzz case and its log. Its rule is the real
// resource's (resource/fences.ts, per lock kind, fencing on or off, fenced reads);
// the Plan's defects break it now and then (a stale write accepted, a fresh one
// refused, a restart that forgets the fences, a lost line). Two kinds of log:
// the resource's memory, which logs each decision in the order it made them; and
// a database's committed decisions (format 2), which carry their place among the
// key's decisions (`order`), say `accepted: null` when the store was lost during
// the commit, and reach the file in another order than they took effect.
import { FencedStore, type Judgement, type Rule } from "../../../resource/fences.ts";
import type { ResourceDecision } from "../../../store/events.ts";
import type { Dice } from "./dice.ts";
import type { Defect, Plan } from "./plan.ts";

type Line = ResourceDecision & { dropped?: boolean };

export interface WriteOutcome {
  accepted: boolean;
  maxBefore: number | null;
}

export interface ReadOutcome {
  accepted: boolean;
  maxBefore: number | null;
  /** The key's value (null: never written). */
  data: unknown;
  /** The highest fence accepted on the key after the read. */
  fence: number | null;
}

export class ResourceModel {
  private readonly rule: Rule;
  private store: FencedStore;
  /** The same rule with fencing off: what a write accepted against the rule does to the key. */
  private readonly lax: FencedStore;
  private readonly lines: Line[] = [];
  private seq = 0;
  private readonly orders = new Map<string, number>();
  readonly committed: boolean;

  constructor(private readonly plan: Plan) {
    this.rule = { kind: plan.lock, permits: plan.permits };
    this.store = new FencedStore(plan.fencing, plan.fenceReads, this.rule);
    this.lax = new FencedStore(false, plan.fenceReads, this.rule);
    this.committed = plan.resource === "committed";
  }

  private has(d: Defect): boolean {
    return this.plan.defects.includes(d);
  }

  /** The rule's judgement of a write, broken now and then by the defects. */
  private judgeWrite(key: string, fence: number | null, data: unknown, d: Dice): Judgement {
    const j = this.store.judgeWrite(key, fence, data);
    if (!j.accepted && fence !== null && this.has("stale-accept") && d.chance("stale-accept", 50)) {
      this.lax.commit(key, this.store.get(key));
      return { ...this.lax.judgeWrite(key, fence, data), accepted: true, maxBefore: j.maxBefore, higher: j.higher };
    }
    if (j.accepted && this.has("false-reject") && d.chance("false-reject", 25)) return { ...j, accepted: false, next: this.store.get(key) };
    return j;
  }

  /** A write decided at `time` and logged; the client is told the outcome (or its reply is lost: the caller's business). */
  write(time: number, key: string, process: number, owner: string, fence: number | null, data: unknown, d: Dice, nullLine = false): WriteOutcome {
    const j = this.judgeWrite(key, fence, data, d);
    this.store.commit(key, j.next);
    // The defect strikes stale writes more often: what the amended rule is about (situations.ts (a)).
    const stale = fence !== null && j.maxBefore !== null && fence < j.maxBefore;
    const unknown = nullLine || (this.committed && this.has("ok-but-null") && j.accepted && d.chance("ok-but-null", stale ? 80 : 30));
    this.log(d, {
      time, op: "write", key, process, owner, fence,
      max_before: unknown ? null : j.maxBefore, accepted: unknown ? null : j.accepted, data, fencing: this.plan.fencing,
      ...(this.rule.kind === "semaphore" ? { permits: this.rule.permits, higher: j.higher ?? 0 } : {}),
    }, unknown ? "took-effect" : "known");
    return { accepted: j.accepted, maxBefore: j.maxBefore };
  }

  /** Committed decisions: the store was lost during the commit; the write took effect, or not. Logged as accepted: null. */
  lostCommit(time: number, key: string, process: number, owner: string, fence: number | null, data: unknown, d: Dice, tookEffect: boolean): void {
    if (tookEffect) {
      this.write(time, key, process, owner, fence, data, d, true);
      return;
    }
    this.log(d, { time, op: "write", key, process, owner, fence, max_before: null, accepted: null, data, fencing: this.plan.fencing }, "no-effect");
  }

  /** A read decided at `time`; `logged` false: a committed read whose answer was lost, which takes a place and leaves no line. */
  read(time: number, key: string, process: number, owner: string, fence: number | null, d: Dice, logged = true): ReadOutcome {
    const j = this.store.judgeRead(key, fence);
    const value = this.store.get(key).value;
    this.store.commit(key, j.next);
    const out = { accepted: j.accepted, maxBefore: j.maxBefore, data: j.accepted ? value : null, fence: this.store.get(key).maxSeen };
    const line: Omit<ResourceDecision, "seq"> = { time, op: "read", key, process, owner, fence, max_before: j.maxBefore, accepted: j.accepted, data: out.data, fencing: this.plan.fencing };
    if (logged) this.log(d, line, "known");
    else this.orders.set(key, (this.orders.get(key) ?? 0) + 1);
    return out;
  }

  /** The resource's memory starts again: every key's fence forgotten, decisions numbered from 1. */
  restart(): void {
    this.store = new FencedStore(this.plan.fencing, this.plan.fenceReads, this.rule);
    this.seq = 0;
  }

  private log(d: Dice, line: Omit<ResourceDecision, "seq">, outcome: "known" | "took-effect" | "no-effect"): void {
    const out: Line = { seq: ++this.seq, ...line };
    if (this.committed) {
      // Its place among the key's decisions, given where it was decided; unknown to the log when the store was lost.
      const place = outcome === "no-effect" ? null : (this.orders.get(line.key) ?? 0) + 1;
      if (place !== null) this.orders.set(line.key, place);
      out.order = outcome === "known" ? place : null;
    }
    if (this.has("log-drops-line") && d.chance("drop-line", 20)) out.dropped = true;
    this.lines.push(out);
  }

  /**
   * The log as the file holds it. The memory's lines are in the order decided,
   * numbered as they were (a restart starts again at 1; a lost line leaves a gap).
   * Committed decisions reach the file in another order (the Plan's swaps of
   * neighbouring lines) and are numbered in file order.
   */
  file(): ResourceDecision[] {
    const kept = this.lines.filter((l) => !l.dropped);
    if (!this.committed) return kept.map(({ dropped: _, ...l }) => l);
    const lines = [...kept];
    for (const s of this.plan.swaps) {
      if (lines.length < 2) break;
      const i = s % (lines.length - 1);
      [lines[i], lines[i + 1]] = [lines[i + 1], lines[i]];
    }
    return lines.map(({ dropped: _, ...l }, i) => ({ ...l, seq: i + 1 }));
  }
}
