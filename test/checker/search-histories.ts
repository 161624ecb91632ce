// Small random histories of one key for the model check's tests: holds whose
// acquires, renews and releases (each a call then a return, one hold's in order)
// interleave at random, built as the search takes them (a MutexHistory).
import fc from "fast-check";
import { ACQUIRE, NOT_RELEASED, RELEASE_OK, RENEW_OK, type MutexHistory } from "../../checker/linearizable/fenced-mutex.ts";

interface Op {
  kind: number;
  hold: number;
  /** Positions of the call and return in the history's order; ret -1: unknown outcome. */
  call: number;
  ret: number;
}

/**
 * A hold: its acquire (for a read or a write, which only an rw lock's model
 * reads), maybe a renew, maybe a release (answered, refused or unknown) or
 * two (a second one after an answered release can only be refused, or is
 * itself a fault); fences from a small set so some clash.
 */
export const holdArb = fc.record({
  fence: fc.constantFrom(1, 2, 3, null),
  read: fc.boolean(),
  renew: fc.boolean(),
  release: fc.constantFrom<keyof typeof RELEASES>("ok", "not-released", "unknown", "none", "ok-twice", "ok-then-refused"),
});

/** The release operations each choice makes; "unknown" is an answered release made unknown. */
const RELEASES = {
  none: [], ok: [RELEASE_OK], "not-released": [NOT_RELEASED], unknown: [RELEASE_OK],
  "ok-twice": [RELEASE_OK, RELEASE_OK], "ok-then-refused": [RELEASE_OK, NOT_RELEASED],
} as const;

/** Up to `maxHolds` holds whose operations (each a call then a return, one hold's in order) interleave as `order` says. */
export function holdsArb(maxHolds: number) {
  return fc.array(holdArb, { minLength: 1, maxLength: maxHolds }).chain((holds) => {
    const steps = holds.map((h) => 2 * (1 + (h.renew ? 1 : 0) + RELEASES[h.release].length));
    const slots = steps.flatMap((n, j) => Array.from({ length: n }, () => j));
    return fc.shuffledSubarray(slots, { minLength: slots.length, maxLength: slots.length }).map((order) => ({ holds, order }));
  });
}

export const historyArb = holdsArb(3);

export type Generated = typeof historyArb extends fc.Arbitrary<infer T> ? T : never;

export function build({ holds, order }: Generated): MutexHistory {
  const plans = holds.map((h, j) => {
    const kinds = [ACQUIRE, ...(h.renew ? [RENEW_OK] : []), ...RELEASES[h.release]];
    return { j, kinds, unknownLast: h.release === "unknown", next: 0, open: null as Op | null };
  });
  const ops: Op[] = [];
  order.forEach((j, position) => {
    const p = plans[j];
    if (p.open) {
      const last = p.next === p.kinds.length;
      p.open.ret = last && p.unknownLast ? -1 : position;
      p.open = null;
      return;
    }
    p.open = { kind: p.kinds[p.next++], hold: j, call: position, ret: -1 };
    ops.push(p.open);
  });
  ops.sort((a, b) => a.call - b.call);
  const n = ops.length;
  const h: MutexHistory = {
    key: "k", length: n,
    call: Float64Array.from(ops, (o) => o.call), ret: Float64Array.from(ops, (o) => o.ret),
    kind: Uint8Array.from(ops, (o) => o.kind), hold: Int32Array.from(ops, (o) => o.hold), row: new Int32Array(n),
    holds: Int32Array.from(holds, (_, j) => j), fences: Float64Array.from(holds, (x) => x.fence ?? NaN), acquireOf: new Int32Array(holds.length),
  };
  ops.forEach((o, i) => {
    if (o.kind === ACQUIRE) h.acquireOf[o.hold] = i;
  });
  return h;
}

