// What real --otel runs on Redis showed of the conversion. The JS SDK's
// whole-millisecond starts: a span that seems to start before the last span of
// its thread ended (by under a millisecond) starts where that one ended, and
// when it is shorter than the move (a sub-millisecond release after a write) its
// end moves too, so that its completion never comes before its invoke. And a
// write the resource refused has a write span: its decision is not counted as
// one without.
import { describe, it, expect } from "vitest";
import { readOtlpJson, traceHistory } from "../../traces/index.ts";
import { instanceLine, kv } from "./otlp.ts";

const T0 = 1_796_000_000_000_000_000n;
const at = (ms: number) => String(T0 + BigInt(Math.round(ms * 1e6)));
const span = (n: number, name: string, from: number, to: number, attrs: Record<string, unknown>) => ({
  traceId: "a".repeat(32),
  spanId: n.toString(16).padStart(16, "0"),
  name,
  kind: 1,
  startTimeUnixNano: at(from),
  endTimeUnixNano: at(to),
  attributes: kv({ ...attrs, "lock.key": "k0", "thread.id": "0" }),
  status: {},
});

describe("a span moved to its thread's last end", () => {
  it("keeps its completion after its invoke when it is shorter than the move", () => {
    const hold = { "lock.owner": "c0-h1", "lock.fence": 1 };
    const text = instanceLine("worker-1", [
      span(1, "lock.acquire", 0, 2, { ...hold, "lock.ttl_ms": 1000, "lock.outcome": "ok" }),
      span(2, "lock.write", 9, 10.85, { ...hold, "lock.data": "c0-h1#1", "lock.outcome": "ok" }),
      // Read as starting at 10 ms (Date.now()), 0.388 ms long: inside the write's last 0.85 ms.
      span(3, "lock.release", 10, 10.388, { ...hold, "lock.released": true, "lock.outcome": "ok" }),
    ]);
    const history = traceHistory(readOtlpJson(Buffer.from(text + "\n"), "moved.json"), "moved");
    expect(history.gaps.starts_moved_within_precision).toBe(1);
    const release = history.events.filter((e) => e.f === "release");
    const write = history.events.filter((e) => e.f === "write");
    expect(release.map((e) => e.type)).toEqual(["invoke", "ok"]);
    expect(release[0].time).toBe(write[1].time);
    expect(release[1].time).toBeGreaterThanOrEqual(release[0].time);
  });
});

describe("a refused write's decision", () => {
  it("is not counted as a decision with no write span", () => {
    const hold = { "lock.owner": "c0-h1", "lock.fence": 1 };
    const client = instanceLine("worker-1", [
      span(1, "lock.acquire", 0, 2, { ...hold, "lock.ttl_ms": 1000, "lock.outcome": "ok" }),
      span(2, "lock.write", 3, 5, { ...hold, "lock.data": "c0-h1#1", "lock.outcome": "fail", "lock.error": "stale-fence" }),
      span(3, "lock.release", 6, 7, { ...hold, "lock.released": true, "lock.outcome": "ok" }),
    ]);
    const resource = instanceLine("resource", [
      span(4, "lock.decision", 4, 4, { ...hold, "lock.data": "c0-h1#1", "lock.decision.accepted": false, "lock.decision.max_before": 2, "lock.decision.order": 1, "lock.fencing": true }),
    ]);
    const history = traceHistory(readOtlpJson(Buffer.from(`${client}\n${resource}\n`), "refused.json"), "refused");
    expect(history.resource).toHaveLength(1);
    expect(history.gaps.decisions_without_write).toBe(0);
  });
});
