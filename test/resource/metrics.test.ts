// GET /metrics shows the resource's totals in Prometheus text.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ResourceClient } from "../../clients/resource.ts";
import { metricValue, raw, runResource, type Running } from "./helpers.ts";

describe("resource metrics", () => {
  let r: Running;
  let client: ResourceClient;
  beforeAll(async () => {
    r = await runResource({ fencing: true });
    client = new ResourceClient(r.handle.url);
  });
  afterAll(async () => {
    client.close();
    await r.close();
  });

  it("counts applied writes, reads, stale rejections and bad requests", async () => {
    const scrape = async (): Promise<string> => {
      const a = await raw(r.handle.url, "GET", "/metrics");
      expect(a.status).toBe(200);
      expect(a.headers["content-type"]).toMatch(/^text\/plain/);
      return a.text;
    };
    const names = ["resource_writes_applied_total", "resource_reads_total", "resource_stale_token_rejections_total", "resource_bad_requests_total"];
    const start = await scrape();
    expect(names.map((n) => metricValue(start, n))).toEqual([0, 0, 0, 0]);
    // Default process metrics come along.
    expect(start).toMatch(/^process_cpu_seconds_total /m);

    await client.write("m", { owner: "a", fence: 1, process: 0, data: 1 });
    await client.write("m", { owner: "b", fence: 2, process: 1, data: 2 });
    await client.write("m", { owner: "a", fence: 1, process: 0, data: 3 });
    await client.read("m", { process: 2 });
    await raw(r.handle.url, "PUT", "/r/m", { "X-Process": "1" }, "1");

    const end = await scrape();
    expect(names.map((n) => metricValue(end, n))).toEqual([2, 1, 1, 1]);
    // Scraping is not a decision.
    expect(r.decisions()).toHaveLength(4);
  });
});
