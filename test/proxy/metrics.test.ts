// GET /metrics on the proxy's API: the connections each proxy carries now and has
// carried, and the toxics in force by type, as a client sees them come and go.
import { describe, expect, it } from "vitest";
import { parseMetrics, samplesOf } from "../helpers.ts";
import { portOf, startHarness, startUpstream, TestClient, uniqueName } from "./helpers.ts";

describe("proxy metrics", () => {
  it("count connections now and in all, per proxy, and toxics by type; GET only", async () => {
    const h = await startHarness();
    const echo = await startUpstream();
    const value = async (metric: string, labels: Record<string, string>): Promise<number | undefined> => {
      const res = await fetch(`${h.server.url}/metrics`);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toMatch(/^text\/plain/);
      return samplesOf(parseMetrics(await res.text()), metric, labels)[0]?.value;
    };
    try {
      const name = uniqueName("m");
      const proxy = await h.toxiproxy.createProxy({ name, listen: "127.0.0.1:0", upstream: `127.0.0.1:${echo.port}` });
      expect(await value("fencecheck_proxy_connections", { proxy: name })).toBe(0);
      // Every type is there from the start, at 0, so a rate or a graph needs no first toxic.
      expect(await value("fencecheck_proxy_toxics", { type: "latency" })).toBe(0);
      expect(await value("fencecheck_proxy_toxics", { type: "block_from" })).toBe(0);

      const a = await TestClient.open(portOf(proxy.listen));
      const b = await TestClient.open(portOf(proxy.listen));
      // Through the proxy both ways, so both are connected upstream.
      await a.roundTrip("a");
      await b.roundTrip("b");
      expect(await value("fencecheck_proxy_connections", { proxy: name })).toBe(2);
      expect(await value("fencecheck_proxy_connections_total", { proxy: name })).toBe(2);

      await proxy.addToxic({ name: "slow", type: "latency", stream: "downstream", toxicity: 1, attributes: { latency: 10, jitter: 0 } } as never);
      await proxy.addToxic({ name: "cut", type: "timeout", stream: "upstream", toxicity: 1, attributes: { timeout: 0 } } as never);
      expect(await value("fencecheck_proxy_toxics", { type: "latency" })).toBe(1);
      expect(await value("fencecheck_proxy_toxics", { type: "timeout" })).toBe(1);

      a.destroy();
      // The proxy hears of the close a moment later.
      let now: number | undefined;
      for (let i = 0; i < 50 && (now = await value("fencecheck_proxy_connections", { proxy: name })) !== 1; i++) await new Promise((r) => setTimeout(r, 20));
      expect(now, "a closed connection leaves the gauge").toBe(1);
      expect(await value("fencecheck_proxy_connections_total", { proxy: name }), "and stays in the total").toBe(2);

      await h.call("POST", "/reset");
      expect(await value("fencecheck_proxy_toxics", { type: "latency" })).toBe(0);
      expect(await value("fencecheck_proxy_toxics", { type: "timeout" })).toBe(0);
      b.destroy();
      await proxy.remove();
      // A deleted proxy's gauge goes with it.
      expect(await value("fencecheck_proxy_connections", { proxy: name })).toBeUndefined();

      expect((await h.call("POST", "/metrics", "{}")).status).toBe(405);
    } finally {
      await h.server.close();
      await echo.close();
    }
  });
});
