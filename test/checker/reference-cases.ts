// Hand-written histories for test/checker/reference.test.ts: one or more per
// anomaly type and per amended rule of docs/anomalies.md, each with the
// verdict, types and counts the documents give it. Times are in ms here and
// written as ns; events are numbered in time order.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "../helpers.ts";

type V = Record<string, unknown>;

export interface OpSpec {
  p: number;
  f: "acquire" | "renew" | "release" | "write" | "read";
  key?: string;
  at: number;
  /** Completion time; omit for an operation never completed. */
  done?: number;
  outcome?: "ok" | "fail" | "info";
  iv?: V;
  ov?: V;
  error?: string;
}

export interface Case {
  name: string;
  header?: V;
  ops: OpSpec[];
  /** Extra lines (notices, nemesis events) as [time ms, event without index/time]. */
  extra?: Array<[number, V]>;
  resource?: V[];
  runJson?: V;
  /** protocol-errors.ndjson's lines (absent: no file). */
  protocolErrors?: V[];
  liveness?: "lenient" | "strict";
  valid: true | false | "unknown";
  types: string[];
  counts?: Record<string, number>;
  unknown?: string[];
  /** Why the fast checker as of 2026-11-29 (before the amendments) may disagree, when it may. */
  amended?: string;
}

const ns = (ms: number) => Math.round(ms * 1e6);

export function historyLines(c: Case): string[] {
  const header = { format: 1, kind: "header", run: `t/${c.name}`, workload: "fenced-write", backend: "redis", fencing: true, ...c.header };
  const evs: Array<{ t: number; order: number; e: V }> = [];
  let order = 0;
  for (const o of c.ops) {
    const key = o.key ?? "k0";
    evs.push({ t: o.at, order: order++, e: { process: o.p, type: "invoke", f: o.f, key, value: o.iv ?? {} } });
    if (o.done !== undefined) {
      const e: V = { process: o.p, type: o.outcome ?? "ok", f: o.f, key, value: o.ov ?? {} };
      if (o.error) e.error = o.error;
      evs.push({ t: o.done, order: order++, e });
    }
  }
  for (const [t, e] of c.extra ?? []) evs.push({ t, order: order++, e });
  evs.sort((a, b) => a.t - b.t || a.order - b.order);
  return [JSON.stringify(header), ...evs.map((x, i) => JSON.stringify({ index: i, time: ns(x.t), ...x.e }))];
}

export function writeCase(c: Case, dir = tempDir("fencecheck-ref-")): string {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "history.ndjson"), historyLines(c).join("\n") + "\n");
  if (c.resource) writeFileSync(join(dir, "resource.ndjson"), c.resource.map((l) => JSON.stringify(l) + "\n").join(""));
  if (c.runJson) writeFileSync(join(dir, "run.json"), JSON.stringify(c.runJson));
  if (c.protocolErrors) writeFileSync(join(dir, "protocol-errors.ndjson"), c.protocolErrors.map((l) => JSON.stringify(l) + "\n").join(""));
  return dir;
}

// Helpers for the common shapes.
const acquire = (p: number, at: number, done: number, owner: string, fence: number | null, ttl = 100, more: { iv?: V; ov?: V } = {}): OpSpec => ({
  p,
  f: "acquire",
  at,
  done,
  iv: { ttl_ms: ttl, ...more.iv },
  ov: { owner, fence, ttl_ms: ttl, ...more.ov },
});
const release = (p: number, at: number, done: number, owner: string, more: V = {}): OpSpec => ({ p, f: "release", at, done, iv: { owner, ...more }, ov: { released: true } });
const write = (p: number, at: number, done: number, owner: string, fence: number | null, data: unknown, outcome: "ok" | "fail" | "info" = "ok", error?: string): OpSpec => ({
  p,
  f: "write",
  at,
  done,
  outcome,
  error,
  iv: { owner, fence, data },
  ov: outcome === "ok" ? { owner, fence, data } : {},
});
const renew = (p: number, at: number, done: number, owner: string, ttl = 100, outcome: "ok" | "fail" | "info" = "ok"): OpSpec => ({
  p,
  f: "renew",
  at,
  done,
  outcome,
  iv: { owner, fence: null, ttl_ms: ttl },
  ov: outcome === "ok" ? { ttl_ms: ttl } : {},
});
let seqN = 0;
const decision = (time: number, owner: string, process: number, fence: number | null, accepted: boolean | null, data: unknown, more: V = {}): V => ({
  seq: ++seqN,
  time: ns(time),
  op: "write",
  key: "k0",
  process,
  owner,
  fence,
  max_before: null,
  accepted,
  data,
  fencing: true,
  ...more,
});
const fresh = () => {
  seqN = 0;
};

const FORMAT2 = { format: 2 };

export function cases(): Case[] {
  const out: Case[] = [];
  const add = (c: Case) => out.push(c);

  // --- What the resource accepted ---
  fresh();
  add({
    name: "stale-write-from-log",
    header: { fencing: false },
    ops: [acquire(0, 0, 1, "a", 1, 10), acquire(1, 2, 50, "b", 2, 2000), write(1, 51, 52, "b", 2, "b#1"), release(1, 53, 54, "b"), write(0, 60, 62, "a", 1, "a#1"), release(0, 63, 64, "a")],
    resource: [decision(51.5, "b", 1, 2, true, "b#1"), decision(61, "a", 0, 1, true, "a#1", { max_before: 2 })],
    valid: false,
    types: ["stale-write-accepted"],
    counts: { "stale-write-accepted": 1 },
  });
  add({
    name: "stale-write-from-history-alone",
    header: { fencing: false },
    ops: [acquire(0, 0, 1, "a", 1, 10), acquire(1, 2, 50, "b", 2, 2000), write(1, 51, 52, "b", 2, "b#1"), write(0, 60, 62, "a", 1, "a#1"), write(0, 70, 72, "a", 1, "a#2")],
    valid: false,
    types: ["stale-write-accepted"],
    counts: { "stale-write-accepted": 2 },
  });
  fresh();
  add({
    name: "amended-unknown-decision-stays-invalid",
    header: { format: 2, fencing: false },
    ops: [acquire(0, 0, 1, "a", 1, 10), acquire(1, 2, 50, "b", 2, 2000), write(1, 51, 52, "b", 2, "b#1"), write(0, 60, 62, "a", 1, "a#1")],
    // The log knows b's write; a's, which the history says completed ok after b's, is "accepted": null.
    resource: [decision(51.5, "b", 1, 2, true, "b#1", { order: 1 }), decision(61, "a", 0, 1, null, "a#1", { order: null })],
    valid: false,
    types: ["stale-write-accepted"],
    counts: { "stale-write-accepted": 1 },
    unknown: ["1 writes completed ok in the history but resource.ndjson has no accepted decision for them"],
    amended: "history-format.md 2026-11-29: the history alone proves the stale write; the log's accepted: null cannot take it back",
  });
  fresh();
  add({
    name: "amended-accepted-null-is-unmatched",
    header: { format: 2 },
    ops: [acquire(0, 0, 1, "a", 1, 2000), write(0, 10, 12, "a", 1, "a#1")],
    resource: [decision(11, "a", 0, 1, null, "a#1", { order: null })],
    valid: "unknown",
    types: [],
    unknown: ["1 writes completed ok in the history but resource.ndjson has no accepted decision for them"],
    amended: "history-format.md 2026-11-29: an ok write whose only decision says accepted: null is unmatched",
  });
  fresh();
  add({
    name: "interleaved-writers-from-log",
    header: { fencing: false },
    ops: [
      acquire(0, 0, 1, "a", 1, 3),
      write(0, 2, 4, "a", 1, "a#1"),
      acquire(1, 5, 6, "b", 2, 3),
      write(1, 7, 9, "b", 2, "b#1"),
      write(0, 10, 12, "a", 1, "a#2"),
      write(1, 13, 15, "b", 2, "b#2"),
      write(0, 16, 18, "a", 1, "a#3"),
    ],
    resource: [
      decision(3, "a", 0, 1, true, "a#1"),
      decision(8, "b", 1, 2, true, "b#1", { max_before: 1 }),
      decision(11, "a", 0, 1, true, "a#2", { max_before: 2 }),
      decision(14, "b", 1, 2, true, "b#2", { max_before: 2 }),
      decision(17, "a", 0, 1, true, "a#3", { max_before: 2 }),
    ],
    valid: false,
    types: ["stale-write-accepted", "interleaved-writers"],
    // a's two late writes are stale; one witness for the pair (a, b) (a wrote around b) and one for (b, a).
    counts: { "stale-write-accepted": 2, "interleaved-writers": 2 },
  });
  fresh();
  add({
    name: "false-rejection-from-log",
    ops: [acquire(0, 0, 1, "a", 1, 2000), write(0, 2, 4, "a", 1, "a#1"), release(0, 5, 6, "a"), acquire(1, 7, 8, "b", 2, 2000), write(1, 9, 11, "b", 2, "b#1", "fail", "stale-fence")],
    resource: [decision(3, "a", 0, 1, true, "a#1"), decision(10, "b", 1, 2, false, "b#1", { max_before: 1 })],
    valid: false,
    types: ["false-rejection"],
    counts: { "false-rejection": 1 },
  });
  add({
    name: "false-rejection-from-history-alone",
    ops: [acquire(0, 0, 1, "a", 1, 2000), write(0, 2, 4, "a", 1, "a#1"), release(0, 5, 6, "a"), acquire(1, 7, 8, "b", 2, 2000), write(1, 9, 11, "b", 2, "b#1", "fail", "stale-fence")],
    valid: false,
    types: ["false-rejection"],
    counts: { "false-rejection": 1 },
  });
  add({
    name: "refusal-of-an-equal-fence-is-right",
    ops: [acquire(0, 0, 1, "a", 1, 2000), write(0, 2, 4, "a", 1, "a#1"), write(0, 9, 11, "a", 1, "a#2", "fail", "stale-fence")],
    valid: true,
    types: [],
  });
  fresh();
  add({
    name: "lost-update-from-log",
    header: { workload: "counter", fencing: false },
    ops: [acquire(0, 0, 1, "a", 1, 2), write(0, 10, 12, "a", 1, 1), acquire(1, 3, 4, "b", 2, 2), write(1, 20, 22, "b", 2, 1)],
    resource: [decision(11, "a", 0, 1, true, 1), decision(21, "b", 1, 2, true, 1, { max_before: 1 })],
    valid: false,
    types: ["lost-update"],
    counts: { "lost-update": 1 },
  });
  add({
    name: "lost-update-from-history-alone-and-duplicate-fence",
    header: { workload: "counter", fencing: false },
    ops: [acquire(0, 0, 1, "a", 1), write(0, 2, 3, "a", 1, 1), release(0, 4, 5, "a"), acquire(1, 10, 11, "b", 1), write(1, 12, 13, "b", 1, 1), release(1, 14, 15, "b")],
    valid: false,
    types: ["duplicate-fence", "lost-update"],
    counts: { "duplicate-fence": 1, "lost-update": 1 },
  });
  add({
    name: "counter-data-not-a-number",
    header: { workload: "counter", fencing: false },
    ops: [acquire(0, 0, 1, "a", 1), write(0, 2, 3, "a", 1, "x"), release(0, 4, 5, "a")],
    valid: "unknown",
    types: [],
    unknown: ["1 counter writes carry data that is not a number, so lost updates around them cannot be judged"],
  });

  // --- The fences ---
  add({
    name: "duplicate-fence-and-fence-regression",
    ops: [
      acquire(0, 0, 1, "a", 1),
      release(0, 2, 3, "a"),
      acquire(1, 10, 11, "b", 2),
      release(1, 12, 13, "b"),
      acquire(2, 20, 21, "c", 1),
      release(2, 22, 23, "c"),
      acquire(3, 30, 31, "d", 1),
      release(3, 32, 33, "d"),
    ],
    valid: false,
    types: ["duplicate-fence", "fence-regression"],
    // c and d each against a (the first with fence 1); c and d each regress below b.
    counts: { "duplicate-fence": 2, "fence-regression": 2 },
  });

  // --- The holds ---
  add({
    name: "mutex-violation",
    ops: [acquire(0, 0, 1, "a", 1, 100), acquire(1, 10, 20, "b", 2, 100), release(1, 50, 51, "b"), release(0, 60, 61, "a")],
    valid: false,
    types: ["mutex-violation"],
    counts: { "mutex-violation": 1 },
  });
  add({
    name: "lease-overlap-is-no-violation",
    ops: [acquire(0, 0, 1, "a", 1, 100), acquire(1, 10, 120, "b", 2, 100), release(1, 150, 151, "b"), release(0, 160, 161, "a")],
    valid: true,
    types: [],
  });
  add({
    name: "amended-late-renew-starts-a-new-span",
    // a's lease [1, 100] lapses; its renew invoked at 120 returns ok at 130: a new span [130, 220], cut at its release at 200.
    // b (asked for at 0.5, before a's ok, so not lost-lock-unnoticed) held from 105 to its release at 125: in the gap.
    ops: [acquire(0, 0, 1, "a", 1, 100), acquire(1, 0.5, 105, "b", 2, 100), release(1, 125, 126, "b"), renew(0, 120, 130, "a", 100), release(0, 200, 201, "a")],
    valid: true,
    types: [],
    amended: "history-format.md 2026-11-29: the gap between a's lapse (100 ms) and its late renew's ok (130 ms) is not certainly valid; the earlier rule ran one span through it and found a mutex-violation with b",
  });
  add({
    name: "amended-late-renew-span-meets-another-hold",
    // b granted in a's gap; a's late renew makes a certainly valid again while b is: mutex-violation and lost-lock-unnoticed.
    ops: [acquire(0, 0, 1, "a", 1, 100), acquire(1, 101, 105, "b", 2, 100), renew(0, 120, 130, "a", 100), release(1, 180, 181, "b"), release(0, 200, 201, "a")],
    valid: false,
    types: ["mutex-violation", "lost-lock-unnoticed"],
    counts: { "mutex-violation": 1, "lost-lock-unnoticed": 1 },
  });
  add({
    name: "expired-on-arrival-and-orphan-lock-node",
    ops: [
      acquire(0, 0, 50, "a", null, 30, { ov: { validity_ms: -20 } }),
      release(0, 60, 61, "a"),
      { p: 1, f: "acquire", at: 5, done: 70, outcome: "fail", error: "orphan-node", iv: { ttl_ms: 30 }, ov: {} },
    ],
    valid: false,
    types: ["expired-on-arrival", "orphan-lock-node"],
    counts: { "expired-on-arrival": 1, "orphan-lock-node": 1 },
  });

  // --- The lock kinds ---
  add({
    name: "rw-violation",
    header: { ...FORMAT2, lock: "rw" },
    ops: [
      acquire(0, 0, 1, "r1", 1, 100, { iv: { mode: "read" } }),
      acquire(1, 2, 3, "r2", 2, 100, { iv: { mode: "read" } }),
      acquire(2, 4, 10, "w", 3, 100, { iv: { mode: "write" } }),
      release(0, 50, 51, "r1"),
      release(1, 52, 53, "r2"),
      release(2, 54, 55, "w"),
    ],
    valid: false,
    types: ["rw-violation"],
    // the writer with each reader; the two readers together are fine.
    counts: { "rw-violation": 2 },
  });
  add({
    name: "semaphore-overflow",
    header: { ...FORMAT2, lock: "semaphore", permits: 2 },
    ops: [
      acquire(0, 0, 1, "a", 1, 100),
      acquire(1, 2, 3, "b", 2, 100),
      acquire(2, 4, 5, "c", 3, 100),
      acquire(3, 6, 7, "d", 4, 100),
      release(0, 50, 51, "a"),
      release(1, 52, 53, "b"),
      release(2, 54, 55, "c"),
      release(3, 56, 57, "d"),
    ],
    valid: false,
    types: ["semaphore-overflow"],
    // c's grant made three, d's four: one witness per hold that made one too many.
    counts: { "semaphore-overflow": 2 },
  });
  add({
    name: "reentrant-inner-release-frees-the-lock",
    header: { ...FORMAT2, lock: "reentrant", fence_on_reentry: "same" },
    ops: [
      acquire(0, 0, 1, "a", 1, 100),
      acquire(0, 2, 3, "a", 1, 100, { iv: { depth: 2 }, ov: { depth: 2 } }),
      release(0, 10, 11, "a", { depth: 2 }),
      acquire(1, 5, 12, "b", 2, 100),
      release(0, 20, 21, "a"),
      release(1, 50, 51, "b"),
    ],
    valid: false,
    types: ["reentrancy-violation"],
    // told once as a reentrancy-violation, not again as a mutex-violation.
    counts: { "reentrancy-violation": 1 },
  });
  add({
    name: "reentrant-fence-broken-promise",
    header: { ...FORMAT2, lock: "reentrant", fence_on_reentry: "same" },
    ops: [acquire(0, 0, 10, "a", 1, 100), acquire(0, 20, 25, "a", 7, 100, { iv: { depth: 2 }, ov: { depth: 2 } }), release(0, 30, 31, "a", { depth: 2 }), release(0, 32, 33, "a")],
    valid: false,
    types: ["reentrancy-violation"],
    counts: { "reentrancy-violation": 1 },
  });
  add({
    name: "amended-reentry-by-another-process",
    header: { ...FORMAT2, lock: "reentrant", fence_on_reentry: "same" },
    // process 1 is granted a re-entry at depth 2 of process 0's hold "a".
    ops: [acquire(0, 0, 1, "a", 1, 100), acquire(1, 10, 12, "a", 1, 100, { iv: { depth: 2 }, ov: { depth: 2 } }), release(1, 20, 21, "a", { depth: 2 }), release(0, 30, 31, "a")],
    valid: false,
    types: ["reentrancy-violation"],
    counts: { "reentrancy-violation": 1 },
    amended: "history-format.md 2026-11-29: a re-entry is granted rightly only to the process holding the outer hold",
  });
  add({
    name: "amended-reentry-after-the-hold-lapsed",
    header: { ...FORMAT2, lock: "reentrant" },
    // a's lease ends at 100; its re-entry is invoked at 150: no moment of it while a was certainly valid.
    ops: [acquire(0, 0, 1, "a", 1, 100), acquire(0, 150, 152, "a", 1, 100, { iv: { depth: 2 }, ov: { depth: 2 } }), release(0, 160, 161, "a", { depth: 2 }), release(0, 170, 171, "a")],
    valid: false,
    types: ["reentrancy-violation"],
    counts: { "reentrancy-violation": 1 },
    amended: "history-format.md 2026-11-29: a re-entry needs its outer hold certainly valid",
  });
  add({
    name: "amended-reentry-with-no-outer-hold",
    header: { ...FORMAT2, lock: "reentrant" },
    ops: [acquire(0, 0, 1, "ghost", 1, 100, { iv: { depth: 2 }, ov: { depth: 2 } }), release(0, 10, 11, "ghost", { depth: 2 })],
    valid: false,
    types: ["reentrancy-violation"],
    counts: { "reentrancy-violation": 1 },
    amended: "history-format.md 2026-11-29: a depth 2 grant with no outer hold",
  });
  add({
    name: "reentrant-valid",
    header: { ...FORMAT2, lock: "reentrant", fence_on_reentry: "same" },
    ops: [
      acquire(0, 0, 1, "a", 1, 100),
      acquire(0, 2, 3, "a", 1, 100, { iv: { depth: 2 }, ov: { depth: 2 } }),
      release(0, 10, 11, "a", { depth: 2 }),
      release(0, 20, 21, "a"),
      acquire(1, 5, 22, "b", 2, 100),
      release(1, 50, 51, "b"),
    ],
    valid: true,
    types: [],
  });
  add({
    name: "grant-after-cancel",
    header: FORMAT2,
    ops: [
      acquire(0, 0, 1, "a", 1, 1000),
      { p: 1, f: "acquire", at: 2, done: 10, outcome: "fail", error: "cancelled", iv: { ttl_ms: 1000 }, ov: { owner: "c1", behind: "a" } },
      release(0, 20, 21, "a"),
      { p: 2, f: "acquire", at: 15, done: 500, outcome: "fail", error: "timeout", iv: { ttl_ms: 1000 }, ov: { behind: "c1" } },
    ],
    valid: false,
    types: ["grant-after-cancel"],
    counts: { "grant-after-cancel": 1 },
  });
  add({
    name: "waiter-woken-by-the-withdrawal-is-fine",
    header: FORMAT2,
    ops: [
      acquire(0, 0, 1, "a", 1, 1000),
      { p: 1, f: "acquire", at: 2, done: 10, outcome: "fail", error: "cancelled", iv: { ttl_ms: 1000 }, ov: { owner: "c1", behind: "a" } },
      { p: 2, f: "acquire", at: 5, done: 30, iv: { ttl_ms: 1000 }, ov: { owner: "c2", fence: 2, ttl_ms: 1000, behind: "c1" } },
      release(0, 20, 21, "a"),
      release(2, 40, 41, "c2"),
    ],
    valid: true,
    types: [],
  });
  const stuck: OpSpec[] = [
    acquire(0, 0, 1, "a", 1, 100),
    release(0, 50, 51, "a"),
    { p: 1, f: "acquire", at: 20, done: 1000, outcome: "fail", error: "timeout", iv: { ttl_ms: 100 }, ov: { behind: "ghost" } },
  ];
  add({ name: "stuck-lock-lenient", header: FORMAT2, ops: stuck, runJson: { options: { workloadOptions: { ttlMs: 100 }, commandTimeoutMs: 300 } }, valid: true, types: [] });
  add({
    name: "stuck-lock-strict",
    header: FORMAT2,
    ops: stuck,
    runJson: { options: { workloadOptions: { ttlMs: 100 }, commandTimeoutMs: 300 } },
    liveness: "strict",
    valid: false,
    types: ["stuck-lock"],
    counts: { "stuck-lock": 1 },
  });

  // --- Counting: how many witnesses a type has ---
  add({
    name: "interleaved-writers-from-history-alone",
    header: { fencing: false },
    // a wrote, then b and c, then a again: (a, b) and (a, c).
    ops: [
      acquire(0, 0, 1, "a", 1, 3),
      write(0, 2, 3, "a", 1, "a#1"),
      acquire(1, 4, 5, "b", 2, 3),
      write(1, 6, 7, "b", 2, "b#1"),
      acquire(2, 8, 9, "c", 3, 3),
      write(2, 10, 11, "c", 3, "c#1"),
      write(0, 12, 13, "a", 1, "a#2"),
    ],
    valid: false,
    types: ["stale-write-accepted", "interleaved-writers"],
    counts: { "stale-write-accepted": 1, "interleaved-writers": 2 },
  });
  fresh();
  add({
    name: "interleaved-writers-from-log-right-after-only",
    header: { fencing: false },
    // the same, with a log: a's second write came right after c's, so the log shows
    // (a, c); real time proves (a, b) too, which the log cannot take away (anomalies.md).
    ops: [
      acquire(0, 0, 1, "a", 1, 3),
      write(0, 2, 3, "a", 1, "a#1"),
      acquire(1, 4, 5, "b", 2, 3),
      write(1, 6, 7, "b", 2, "b#1"),
      acquire(2, 8, 9, "c", 3, 3),
      write(2, 10, 11, "c", 3, "c#1"),
      write(0, 12, 13, "a", 1, "a#2"),
    ],
    resource: [
      decision(2.5, "a", 0, 1, true, "a#1"),
      decision(6.5, "b", 1, 2, true, "b#1", { max_before: 1 }),
      decision(10.5, "c", 2, 3, true, "c#1", { max_before: 2 }),
      decision(12.5, "a", 0, 1, true, "a#2", { max_before: 3 }),
    ],
    valid: false,
    types: ["stale-write-accepted", "interleaved-writers"],
    counts: { "stale-write-accepted": 1, "interleaved-writers": 2 },
  });
  add({
    name: "mutex-violation-three-holds-three-pairs",
    ops: [acquire(0, 0, 1, "a", 1, 100), acquire(1, 2, 3, "b", 2, 100), acquire(2, 4, 5, "c", 3, 100), release(0, 50, 51, "a"), release(1, 52, 53, "b"), release(2, 54, 55, "c")],
    valid: false,
    types: ["mutex-violation"],
    counts: { "mutex-violation": 3 },
  });
  add({
    name: "lost-lock-unnoticed-one-per-hold",
    ops: [
      acquire(0, 0, 1, "a", 1, 10),
      acquire(1, 20, 21, "b", 2, 10),
      release(1, 25, 26, "b"),
      renew(0, 30, 31, "a", 10),
      acquire(2, 32, 33, "c", 3, 10),
      release(2, 34, 35, "c"),
      renew(0, 50, 51, "a", 10),
      release(0, 70, 71, "a"),
    ],
    valid: false,
    // Two late renews of a, one witness. a's spans are [1, 10], [31, 40], [51, 60]: c (33 to 34) meets the second, b (21 to 25) falls in a gap.
    types: ["mutex-violation", "lost-lock-unnoticed"],
    counts: { "mutex-violation": 1, "lost-lock-unnoticed": 1 },
    amended: "history-format.md 2026-11-29: a's late renews start new spans; the earlier rule ran one span from 1 to 60 ms and also paired a with b",
  });
  add({
    name: "unknown-renew-cuts-the-span",
    // a's renew at 10 gets no answer and may have set a 20 ms lease: a is certainly valid until 30 only; b granted at 50.
    ops: [acquire(0, 0, 1, "a", 1, 100), renew(0, 10, 12, "a", 20, "info"), acquire(1, 40, 50, "b", 2, 100), release(1, 60, 61, "b")],
    valid: true,
    types: [],
  });
  fresh();
  add({
    name: "no-false-rejection-below-an-unknown-decision",
    header: { format: 2 },
    ops: [
      acquire(0, 0, 1, "a", 1, 3),
      write(0, 2, 3, "a", 1, "a#1"),
      acquire(1, 4, 5, "b", 3, 3),
      { p: 1, f: "write", at: 6, done: 8, outcome: "info", iv: { owner: "b", fence: 3, data: "b#1" } },
      acquire(2, 10, 11, "c", 2, 3),
      write(2, 12, 13, "c", 2, "c#1", "fail", "stale-fence"),
    ],
    resource: [decision(2.5, "a", 0, 1, true, "a#1", { order: 1 }), decision(7, "b", 1, 3, null, "b#1", { order: null }), decision(12.5, "c", 2, 2, false, "c#1", { order: 2, max_before: 3 })],
    valid: false,
    // c's fence 2 regresses below b's 3; its refusal is not false (b's write may have raised the fence).
    types: ["fence-regression"],
    counts: { "fence-regression": 1 },
  });
  fresh();
  add({
    name: "stale-write-one-witness-per-stale-write",
    header: { fencing: false },
    ops: [
      acquire(0, 0, 1, "a", 1, 3),
      acquire(1, 4, 5, "b", 2, 3),
      write(1, 6, 7, "b", 2, "b#1"),
      acquire(2, 8, 9, "c", 3, 3),
      write(2, 10, 11, "c", 3, "c#1"),
      write(0, 12, 13, "a", 1, "a#1"),
    ],
    resource: [decision(6.5, "b", 1, 2, true, "b#1"), decision(10.5, "c", 2, 3, true, "c#1", { max_before: 2 }), decision(12.5, "a", 0, 1, true, "a#1", { max_before: 3 })],
    valid: false,
    types: ["stale-write-accepted"],
    counts: { "stale-write-accepted": 1 },
  });
  fresh();
  add({
    name: "rw-stale-write-after-a-read-with-a-higher-fence",
    header: { ...FORMAT2, lock: "rw", fencing: false },
    ops: [
      acquire(0, 0, 1, "w", 1, 3, { iv: { mode: "write" } }),
      acquire(1, 4, 5, "r", 2, 3, { iv: { mode: "read" } }),
      { p: 1, f: "read", at: 6, done: 7, iv: { owner: "r", fence: 2 }, ov: { data: null, fence: 2 } },
      write(0, 10, 11, "w", 1, "w#1"),
    ],
    resource: [
      { ...decision(6.5, "r", 1, 2, true, null), op: "read" },
      decision(10.5, "w", 0, 1, true, "w#1", { max_before: 2 }),
    ],
    valid: false,
    types: ["stale-write-accepted"],
    counts: { "stale-write-accepted": 1 },
  });
  fresh();
  add({
    name: "semaphore-accepts-the-n-newest",
    header: { ...FORMAT2, lock: "semaphore", permits: 2 },
    ops: [
      acquire(0, 0, 1, "a", 1, 3),
      acquire(1, 2, 3, "b", 2, 3),
      write(1, 4, 5, "b", 2, "b#1"),
      acquire(2, 6, 7, "c", 3, 3),
      write(2, 8, 9, "c", 3, "c#1"),
      write(1, 10, 11, "b", 2, "b#2"),
      write(0, 12, 13, "a", 1, "a#1"),
    ],
    resource: [
      decision(4.5, "b", 1, 2, true, "b#1", { permits: 2, higher: 0 }),
      decision(8.5, "c", 2, 3, true, "c#1", { permits: 2, higher: 0, max_before: 2 }),
      decision(10.5, "b", 1, 2, true, "b#2", { permits: 2, higher: 1, max_before: 3 }),
      decision(12.5, "a", 0, 1, true, "a#1", { permits: 2, higher: 2, max_before: 3 }),
    ],
    valid: false,
    // b (one higher fence) is within the 2 permits; a (two higher) is stale.
    types: ["stale-write-accepted"],
    counts: { "stale-write-accepted": 1 },
  });
  // --- The lease rule (history-format.md "Client operations"): the smaller of asked and granted, the one
  // given where only one is, none where neither is ---
  const lapse = (iv: V, ov: V): OpSpec[] => [
    { p: 0, f: "acquire", at: 0, done: 1, iv, ov: { owner: "a", fence: 1, ...ov } },
    // b is granted at 60 ms, while a's lease of 100 ms (from 0) still runs, if a has one.
    acquire(1, 55, 60, "b", 2, 100),
    release(1, 70, 71, "b"),
    release(0, 80, 81, "a"),
  ];
  add({ name: "lease-asked-only", header: FORMAT2, ops: lapse({ ttl_ms: 100 }, {}), valid: false, types: ["mutex-violation"], counts: { "mutex-violation": 1 } });
  add({ name: "lease-granted-only", header: FORMAT2, ops: lapse({}, { ttl_ms: 100 }), valid: false, types: ["mutex-violation"], counts: { "mutex-violation": 1 } });
  // Granted 50 ms of the 100 asked: a's span ends at 50, before b's ok.
  add({ name: "lease-smaller-granted", header: FORMAT2, ops: lapse({ ttl_ms: 100 }, { ttl_ms: 50 }), valid: true, types: [] });
  add({ name: "lease-none", header: FORMAT2, ops: lapse({}, {}), valid: true, types: [] });
  // No lease anywhere and no run.json: the stuck threshold is four times 1000 ms, not zero.
  add({
    name: "stuck-lock-no-lease-without-run-json",
    header: FORMAT2,
    ops: [
      { p: 0, f: "acquire", at: 0, done: 1, iv: {}, ov: { owner: "a", fence: 1 } },
      release(0, 50, 51, "a"),
      { p: 1, f: "acquire", at: 20, done: 1000, outcome: "fail", error: "timeout", iv: {}, ov: { behind: "ghost" } },
    ],
    liveness: "strict",
    valid: true,
    types: [],
  });
  add({
    name: "stuck-lock-without-run-json",
    header: FORMAT2,
    ops: stuck,
    liveness: "strict",
    // four times the largest lease of an acquire, 400 ms, and the lock was free and not granted for 949 ms.
    valid: false,
    types: ["stuck-lock"],
    counts: { "stuck-lock": 1 },
  });
  add({
    name: "grant-after-cancel-entry-granted",
    header: FORMAT2,
    ops: [
      { p: 1, f: "acquire", at: 2, done: 10, outcome: "fail", error: "cancelled", iv: { ttl_ms: 1000 }, ov: { owner: "c1" } },
      acquire(2, 15, 20, "c1", 1, 100),
      release(2, 30, 31, "c1"),
    ],
    valid: false,
    types: ["grant-after-cancel"],
    counts: { "grant-after-cancel": 1 },
  });

  // --- UNKNOWN ---
  fresh();
  add({
    name: "seq-gap-and-duplicate-owner",
    ops: [acquire(0, 0, 1, "a", 1), write(0, 2, 4, "a", 1, "a#1"), release(0, 5, 6, "a"), acquire(1, 10, 11, "a", 2), release(1, 12, 13, "a")],
    resource: [{ ...decision(3, "a", 0, 1, true, "a#1"), seq: 2 }],
    valid: "unknown",
    types: [],
    unknown: ["resource.ndjson: the first decision is seq 2, not 1; earlier decisions are missing", "1 acquires returned an owner already given to another hold of the same key"],
  });
  fresh();
  add({
    name: "committed-decisions-in-order-not-line-order",
    header: { format: 2 },
    // Logged b (fence 2) first, a (fence 1) second, but a took effect first (order 1): nothing stale.
    ops: [acquire(0, 0, 1, "a", 1, 2), write(0, 2, 20, "a", 1, "a#1"), acquire(1, 3, 4, "b", 2, 2), write(1, 5, 21, "b", 2, "b#1")],
    resource: [decision(8, "b", 1, 2, true, "b#1", { order: 2, max_before: 1 }), decision(7, "a", 0, 1, true, "a#1", { order: 1 })],
    valid: true,
    types: [],
  });

  // --- An adapter program that broke the protocol (docs/history-format.md "protocol-errors.ndjson") ---
  // Client 0's program wrote a stray line while its acquire was outstanding (the
  // acquire's info), and its next program one while nothing was outstanding (no
  // line in the history at all); client 1's program timed out once.
  const stray = (time: number, process: number, what: string): V => ({
    time: ns(time), worker: "worker-1", client: 0, process, pid: 4242, code: "adapter-bad-line",
    message: `adapter /tmp/x.adapter.json (client 0, pid 4242) wrote a line that is not a message of the protocol (not JSON): ${what}; killed it; it wrote nothing to standard error`,
  });
  const adapterRun = [
    acquire(0, 0, 1, "c0a1-h1", 1),
    release(0, 2, 3, "c0a1-h1"),
    { p: 0, f: "acquire", at: 4, done: 5, outcome: "info", error: "adapter-bad-line" } as OpSpec,
    acquire(2, 10, 11, "c0a2-h1", 2),
    release(2, 12, 13, "c0a2-h1"),
    { p: 1, f: "acquire", at: 20, done: 30, outcome: "info", error: "adapter-timeout" } as OpSpec,
  ];
  const unknownBy = (n: number) =>
    `the adapter program broke the protocol ${n} time${n === 1 ? "" : "s"} (adapter-bad-line ×${n}; each a line of protocol-errors.ndjson): what it did around them may be missing from the history, so it cannot show the lock was correct`;
  add({
    name: "protocol-errors-outstanding-and-idle-unknown",
    header: FORMAT2,
    ops: adapterRun,
    protocolErrors: [stray(5, 0, "stray while an acquire was outstanding"), stray(14, 2, "stray while idle")],
    valid: "unknown",
    types: [],
    unknown: [unknownBy(2)],
  });
  add({
    name: "protocol-errors-with-an-anomaly-invalid",
    header: FORMAT2,
    // The second program's hold given the first's fence: a duplicate-fence, which makes the run INVALID whatever else.
    ops: adapterRun.map((o) => (o.ov?.owner === "c0a2-h1" ? { ...o, ov: { ...o.ov, fence: 1 } } : o)),
    protocolErrors: [stray(14, 2, "stray while idle")],
    valid: false,
    types: ["duplicate-fence"],
    counts: { "duplicate-fence": 1 },
    unknown: [unknownBy(1)],
  });
  add({
    name: "adapter-timeout-alone-is-an-ordinary-info",
    header: FORMAT2,
    ops: adapterRun.filter((o) => o.error !== "adapter-bad-line"),
    valid: true,
    types: [],
  });
  return out;
}
