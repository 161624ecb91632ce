// A small hand-written run for the report tests. p0 takes the lock (hold A, fence 1)
// and writes, is paused mid-write; p1 is granted the lock (hold B, fence 2) while A's
// lease is still certainly valid (a broken lock service: the mutex-violation witness),
// writes; when the pause ends A's write reaches the resource and is refused as stale.
// Then an acquire of p0 times out (info) and p2 takes a hold it never releases.
// The key and A's owner carry markup and quotes, as a hostile history could.
import type { HistoryEvent, HistoryHeader, ResourceDecision, Results, RunStats } from "../../store/events.ts";

export const EVIL = `<script>alert(1)</script>"&'`;
export const KEY = `k${EVIL}`;
export const OWNER_A = `A${EVIL}`;

const ms = (v: number) => Math.round(v * 1e6);

export const header: HistoryHeader = {
  format: 1, kind: "header", run: `run-1${EVIL}`, workload: "fenced-write", backend: "redis", fencing: true,
};

type Row = [number, HistoryEvent["process"], HistoryEvent["type"], string, Record<string, unknown>?, string?];
const rows: Row[] = [
  [0, 0, "invoke", "acquire", { ttl_ms: 1000 }],
  [2, 0, "ok", "acquire", { owner: OWNER_A, fence: 1, ttl_ms: 1000 }],
  [10, 0, "invoke", "write", { owner: OWNER_A, fence: 1, data: "a1" }],
  [12, 0, "ok", "write", { owner: OWNER_A, fence: 1, data: "a1" }],
  [20, "nemesis", "info", "start-pause", { targets: ["worker-0"] }],
  [30, 0, "invoke", "write", { owner: OWNER_A, fence: 1, data: "a2" }],
  [895, 1, "invoke", "acquire", { ttl_ms: 1000 }],
  [900, 1, "ok", "acquire", { owner: "B", fence: 2, ttl_ms: 1000 }],
  [910, 1, "invoke", "write", { owner: "B", fence: 2, data: "b1" }],
  [913, 1, "ok", "write", { owner: "B", fence: 2, data: "b1" }],
  [1500, "nemesis", "info", "stop-pause", { targets: ["worker-0"] }],
  [1505, 0, "fail", "write", { owner: OWNER_A, fence: 1, seen: 2 }, "stale-fence"],
  [1510, 0, "invoke", "release", { owner: OWNER_A, fence: 1 }],
  [1512, 0, "ok", "release", { released: false }],
  [1600, 1, "invoke", "release", { owner: "B", fence: 2 }],
  [1602, 1, "ok", "release", { released: true }],
  [1700, 0, "invoke", "acquire", { ttl_ms: 1000 }],
  [2000, 0, "info", "acquire", undefined, "timeout"],
  [2050, 2, "invoke", "acquire", { ttl_ms: 1000 }],
  [2060, 2, "ok", "acquire", { owner: "C", fence: 3, ttl_ms: 1000 }],
  [2100, 2, "invoke", "write", { owner: "C", fence: 3, data: "c1" }],
  [2104, 2, "ok", "write", { owner: "C", fence: 3, data: "c1" }],
];

export const events: HistoryEvent[] = rows.map(([t, process, type, f, value, error], index) => {
  const e: HistoryEvent = { index, time: ms(t), process, type, f };
  if (process !== "nemesis") e.key = KEY;
  if (value) e.value = value;
  if (error) e.error = error;
  return e;
});

const decision = (seq: number, t: number, process: number, owner: string, fence: number, max_before: number | null, accepted: boolean, data: string): ResourceDecision =>
  ({ seq, time: ms(t), op: "write", key: KEY, process, owner, fence, max_before, accepted, data, fencing: true });

export const decisions: ResourceDecision[] = [
  decision(1, 11, 0, OWNER_A, 1, null, true, "a1"),
  decision(2, 911, 1, "B", 2, 1, true, "b1"),
  decision(3, 1504, 0, OWNER_A, 1, 2, false, "a2"),
  decision(4, 2102, 2, "C", 3, 2, true, "c1"),
];

export const stats: RunStats = {
  events: events.length,
  duration_s: 2.104,
  ops: { acquire: { ok: 3, fail: 0, info: 1 }, write: { ok: 3, fail: 1, info: 0 }, release: { ok: 2, fail: 0, info: 0 } },
  ops_per_s: 4.8,
  acquire_latency_ms: { p50: 5, p99: 10, max: 10 },
  writes_accepted: 3,
  stale_writes_refused: 1,
  lease_overlaps: 0,
  faults: { "start-pause": 1 },
};

export const results: Results = {
  valid: false,
  anomaly_types: ["mutex-violation"],
  anomalies: {
    "mutex-violation": [{
      key: KEY,
      events: [0, 1, 6, 7],
      seqs: [1, 2],
      explanation: `Hold ${OWNER_A} was certainly valid until 1.000 s (acquire #0 invoked at 0.000 s with ttl 1000 ms), ` +
        `but hold B of the same key was granted at 0.900 s (#7).`,
    }],
  },
  stats,
};
