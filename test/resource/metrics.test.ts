// GET /metrics shows the resource's totals in Prometheus text.
import { describe, expect, it } from "vitest";
import { metricValue, raw, resourceForSuite } from "./helpers.ts";

describe("resource metrics", () => {
  const s = resourceForSuite({ fencing: true });

  it("counts applied writes, reads, stale rejections and bad requests", async () => {
    const scrape = async (): Promise<string> => {
      const a = await raw(s.r.handle.url, "GET", "/metrics");
      expect(a.status).toBe(200);
      expect(a.headers["content-type"]).toMatch(/^text\/plain/);
      return a.text;
    };
    const names = ["resource_writes_applied_total", "resource_reads_total", "resource_stale_token_rejections_total", "resource_bad_requests_total"];
    const start = await scrape();
    expect(names.map((n) => metricValue(start, n))).toEqual([0, 0, 0, 0]);
    // Default process metrics come along.
    expect(start).toMatch(/^process_cpu_seconds_total /m);

    await s.client.write("m", { owner: "a", fence: 1, process: 0, data: 1 });
    await s.client.write("m", { owner: "b", fence: 2, process: 1, data: 2 });
    await s.client.write("m", { owner: "a", fence: 1, process: 0, data: 3 });
    await s.client.read("m", { process: 2 });
    await raw(s.r.handle.url, "PUT", "/r/m", { "X-Process": "1" }, "1");

    const end = await scrape();
    expect(names.map((n) => metricValue(end, n))).toEqual([2, 1, 1, 1]);
    // Scraping is not a decision.
    expect(s.r.decisions()).toHaveLength(4);
  });
});
