// The workers' metrics agree with the history they are counted from: every
// recorded fixture's events, fed to OperationMetrics as LogicalClient emitted
// them, give the counts a reader of history.ndjson finds by hand.
import { describe, it, expect } from "vitest";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { Registry } from "prom-client";
import { OperationMetrics } from "../../workloads/metrics.ts";
import type { UnindexedEvent } from "../../store/events.ts";
import { REPO, parseMetrics, readNdjson, samplesOf } from "../helpers.ts";

const FIXTURES = join(REPO, "histories", "fixtures");
const recorded = ["good", "bad"].flatMap((kind) => readdirSync(join(FIXTURES, kind)).filter((d) => d.startsWith("recorded-")).map((d) => join(FIXTURES, kind, d)));

/** The sum of the samples of `name` with these labels, as the registry's Prometheus text shows them. */
async function valueOf(registry: Registry, name: string, labels: Record<string, string> = {}): Promise<number> {
  const samples = samplesOf(parseMetrics(await registry.metrics()), name, labels);
  if (samples.length === 0) throw new Error(`no sample ${name} ${JSON.stringify(labels)}`);
  return samples.reduce((s, x) => s + x.value, 0);
}

describe("OperationMetrics", () => {
  it("has recorded fixtures to be checked against", () => {
    expect(recorded.length).toBeGreaterThanOrEqual(5);
  });

  for (const dir of recorded)
    it(`counts what ${dir.slice(FIXTURES.length + 1)}/history.ndjson records`, async () => {
      const events = readNdjson(join(dir, "history.ndjson")).slice(1) as unknown as UnindexedEvent[];
      const registry = new Registry();
      const metrics = new OperationMetrics(registry);
      for (const e of events) metrics.observe(e);

      const ops = events.filter((e) => typeof e.process === "number");
      const count = (f: string, type: string, extra: (e: UnindexedEvent) => boolean = () => true) => ops.filter((e) => e.f === f && e.type === type && extra(e)).length;
      expect(await valueOf(registry, "fencecheck_acquire_attempts_total")).toBe(count("acquire", "invoke"));
      for (const outcome of ["ok", "fail", "info"]) {
        expect(await valueOf(registry, "fencecheck_acquires_total", { outcome }), `acquires ${outcome}`).toBe(count("acquire", outcome));
        expect(await valueOf(registry, "fencecheck_acquire_duration_seconds_count", { outcome }), `acquire durations ${outcome}`).toBe(count("acquire", outcome));
        expect(await valueOf(registry, "fencecheck_renews_total", { outcome }), `renews ${outcome}`).toBe(count("renew", outcome));
      }
      const released = (r: boolean) => (e: UnindexedEvent) => e.value?.released === r;
      expect(await valueOf(registry, "fencecheck_releases_total", { outcome: "ok" })).toBe(count("release", "ok", released(true)));
      expect(await valueOf(registry, "fencecheck_releases_total", { outcome: "not-owner" })).toBe(count("release", "ok", released(false)));
      expect(await valueOf(registry, "fencecheck_releases_total", { outcome: "info" })).toBe(count("release", "info"));

      // A hold runs from its acquire's ok to its release's invoke, in the same process.
      const grantedAt = new Map<number, number>();
      let holds = 0;
      let heldNs = 0;
      for (const e of ops) {
        if (e.f === "acquire" && e.type === "ok") grantedAt.set(e.process as number, e.time);
        if (e.f === "release" && e.type === "invoke") {
          holds++;
          heldNs += e.time - grantedAt.get(e.process as number)!;
        }
      }
      expect(await valueOf(registry, "fencecheck_hold_duration_seconds_count")).toBe(holds);
      expect(await valueOf(registry, "fencecheck_hold_duration_seconds_sum")).toBeCloseTo(heldNs / 1e9, 6);
    });

  it("tells a release refused as non-owner from a release", async () => {
    const registry = new Registry();
    const m = new OperationMetrics(registry);
    const op = (time: number, type: UnindexedEvent["type"], f: string, value?: Record<string, unknown>): UnindexedEvent => ({ time, process: 0, type, f, key: "k0", ...(value ? { value } : {}) });
    for (const e of [op(0, "invoke", "acquire"), op(2e6, "ok", "acquire", { owner: "a" }), op(1.5e9, "invoke", "release"), op(1.6e9, "ok", "release", { released: false })]) m.observe(e);
    expect(await valueOf(registry, "fencecheck_releases_total", { outcome: "not-owner" })).toBe(1);
    expect(await valueOf(registry, "fencecheck_releases_total", { outcome: "ok" })).toBe(0);
    expect(await valueOf(registry, "fencecheck_acquire_duration_seconds_sum", { outcome: "ok" })).toBeCloseTo(0.002, 9);
    expect(await valueOf(registry, "fencecheck_hold_duration_seconds_sum")).toBeCloseTo(1.498, 9);
  });
});
