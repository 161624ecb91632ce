import { describe, expect, it } from "vitest";
import { renderSummary } from "../../reports/index.ts";
import { header, results } from "./fixture.ts";

// eslint-disable-next-line no-control-regex
const noAnsi = (s: string) => s.replace(/\u001b\[[0-9;]*m/g, "");

describe("renderSummary", () => {
  it("names the verdict, the run, the anomalies and the figures", () => {
    const text = noAnsi(renderSummary({ header, results }));
    const lines = text.split("\n");
    expect(lines[0]).toMatch(/^INVALID\s+fenced-write on redis, fencing on/);
    expect(text).toContain("mutex-violation ×1: Hold A");
    expect(text).toMatch(/ops\/s: 4\.8 over 2\.1 s \(22 events\)/);
    expect(text).toContain("acquire latency: p50 5.00 ms, p99 10.0 ms, max 10.0 ms");
    expect(text).toContain("acquires: 3 ok, 0 failed, 1 unknown");
    expect(text).toContain("writes: 3 accepted, 1 stale refused");
    expect(text).toContain("lease overlaps: 0");
    expect(text).toContain("faults: pause ×1");
  });

  it("says VALID and UNKNOWN", () => {
    const ok = renderSummary({ header: { ...header, fencing: false }, results: { ...results, valid: true, anomaly_types: [], anomalies: {} } });
    expect(noAnsi(ok)).toMatch(/^VALID\s+fenced-write on redis, fencing off/);
    expect(noAnsi(ok)).not.toContain("mutex-violation");
    const unknown = renderSummary({ header, results: { ...results, valid: "unknown" } });
    expect(noAnsi(unknown)).toMatch(/^UNKNOWN/);
  });

  it("says how often the adapter broke the protocol and where each is, and for an INVALID run what the errors alone would have made of it; nothing when it never did", () => {
    const broke = (valid: true | false | "unknown", n: number) => noAnsi(renderSummary({ header, results: { ...results, valid, stats: { ...results.stats, protocol_errors: n } } }));
    expect(broke("unknown", 2)).toMatch(/^ {2}protocol errors: 2 \(each a line of protocol-errors\.ndjson, and of logs\/worker-N\.log\)$/m);
    expect(broke(false, 1)).toMatch(/^ {2}protocol errors: 1 \(.*\); without its anomalies the run would be UNKNOWN$/m);
    expect(broke(true, 0)).not.toContain("protocol errors");
  });

  it("prints each anomaly type's true count (stats.anomaly_counts), not the witnesses kept", () => {
    const kept = results.anomalies["mutex-violation"];
    const text = noAnsi(renderSummary({ header, results: { ...results, stats: { ...results.stats, anomaly_counts: { "mutex-violation": 250 } } } }));
    expect(text).toContain(`mutex-violation ×250 (${kept.length} witnesses kept): Hold A`);
    // Without the count (an old results.json), the witnesses are the count.
    const old = noAnsi(renderSummary({ header, results: { ...results, stats: { ...results.stats, anomaly_counts: undefined } } }));
    expect(old).toContain(`mutex-violation ×${kept.length}: Hold A`);
  });

  it("tolerates a results file with missing or malformed stats", () => {
    const text = noAnsi(renderSummary({
      header,
      results: { valid: true, anomaly_types: [], anomalies: {}, stats: { ops_per_s: "fast", faults: null, acquire_latency_ms: { p50: 1 } } },
    }));
    expect(text).toContain("ops/s: n/a");
    expect(text).toContain("acquire latency: n/a");
    expect(text).toContain("writes: n/a accepted, n/a stale refused");
    expect(text).toContain("faults: n/a");
    const bare = renderSummary({ header, results: { valid: false, anomalies: { "lost-update": [{ explanation: "x" }] } } as never });
    expect(noAnsi(bare)).toContain("lost-update ×1: x");
  });

  it("keeps terminal control characters from the history out of the output", () => {
    const text = renderSummary({ header: { ...header, run: "r\u001b[2J", workload: "w\u001b]0;x\u0007" }, results });
    const left = noAnsi(text);
    expect(left).not.toContain("\u001b");
    expect(left).not.toContain("\u0007");
    expect(left).toContain("r?[2J");
  });
});
