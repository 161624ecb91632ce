// --metrics-port: during a real run, one address on 127.0.0.1 shows every
// worker's series (labelled by worker, backend and client), the fault proxy's and
// the resource's; once the run is over the port is closed and nothing is left
// running. Bad values and a taken port are refused before anything starts.
import { describe, it, expect } from "vitest";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { tempRunDir, processesMentioning, waitFor, runCli, latestRun, parseMetrics, samplesOf, takenPort, type Sample } from "../helpers.ts";

const ADDRESS = /fencecheck: metrics at (http:\/\/127\.0\.0\.1:(\d+)\/metrics)/;
const WORKERS = ["worker-1", "worker-2"];

async function scrape(url: string): Promise<{ contentType: string; samples: Sample[] }> {
  const res = await fetch(url, { signal: AbortSignal.timeout(5000) });
  expect(res.status).toBe(200);
  return { contentType: res.headers.get("content-type") ?? "", samples: parseMetrics(await res.text()) };
}

const total = (samples: Sample[], name: string, labels: Record<string, string>): number => samplesOf(samples, name, labels).reduce((s, x) => s + x.value, 0);

/** Every worker has made acquires and been granted some, as the scrape shows. */
const everyWorkerAcquired = (samples: Sample[]): boolean =>
  WORKERS.every((worker) => total(samples, "fencecheck_acquire_attempts_total", { worker }) > 0 && total(samples, "fencecheck_acquires_total", { worker, outcome: "ok" }) > 0);

describe("--metrics-port", () => {
  it("serves each worker's series, the proxy's and the resource's during a run, and closes with it", async () => {
    const store = tempRunDir("fc-metrics-");
    // The default nemesis freezes workers with SIGSTOP: a scrape must not wait on a frozen one.
    const run = runCli("test", ["--time-limit", "6", "--workers", "2", "--metrics-port", "0", "--store", store]);
    expect(await waitFor(() => ADDRESS.test(run.stderr()), 30_000), run.stderr()).toBe(true);
    const url = ADDRESS.exec(run.stderr())![1]!;

    let last: Sample[] = [];
    let contentType = "";
    const deadline = Date.now() + 20_000;
    while (Date.now() < deadline && run.child.exitCode === null) {
      ({ samples: last, contentType } = await scrape(url));
      if (everyWorkerAcquired(last)) break;
      await new Promise((r) => setTimeout(r, 500));
    }
    expect(everyWorkerAcquired(last), `the last scrape:\n${last.map((s) => `${s.name} ${JSON.stringify(s.labels)} ${s.value}`).join("\n")}`).toBe(true);
    expect(contentType).toMatch(/^text\/plain; version=0\.0\.4/);

    for (const worker of WORKERS) {
      const mine = last.filter((s) => s.labels.worker === worker);
      for (const s of mine) expect(s.labels, `${s.name} of ${worker}`).toMatchObject({ backend: "redis", client: "redis" });
      // Every metric the workers promise, under this worker's label; none keyed by lock key or owner.
      for (const name of ["fencecheck_acquire_attempts_total", "fencecheck_acquires_total", "fencecheck_acquire_duration_seconds_count", "fencecheck_hold_duration_seconds_count", "fencecheck_renews_total", "fencecheck_releases_total"])
        expect(samplesOf(mine, name).length, `${name} of ${worker}`).toBeGreaterThan(0);
      for (const s of mine) expect(Object.keys(s.labels).filter((l) => l === "key" || l === "owner")).toEqual([]);
      expect(total(mine, "fencecheck_acquire_duration_seconds_count", { outcome: "ok" })).toBe(total(mine, "fencecheck_acquires_total", { outcome: "ok" }));
      expect(samplesOf(mine, "fencecheck_releases_total", { outcome: "not-owner" })).toHaveLength(1);
    }
    // The fault proxy carries each worker's connections to redis-1 and to the resource.
    for (const worker of WORKERS) expect(total(last, "fencecheck_proxy_connections", { proxy: `${worker}--redis-1` }), worker).toBeGreaterThan(0);
    expect(samplesOf(last, "fencecheck_proxy_toxics", { type: "latency" })).toHaveLength(1);
    expect(samplesOf(last, "resource_writes_applied_total")).toHaveLength(1);

    const code = await run.exit;
    expect([0, 1], run.stderr()).toContain(code);
    const runJson = JSON.parse(readFileSync(join(latestRun(store), "run.json"), "utf8")) as { metrics?: string };
    expect(runJson.metrics).toBe(url);
    // The port is closed with the run, and no process of the run is left.
    await expect(fetch(url, { signal: AbortSignal.timeout(2000) })).rejects.toThrow();
    expect(await waitFor(() => processesMentioning(store).length === 0, 5000), processesMentioning(store).join("\n")).toBe(true);
  });

  it("--help says it is off unless given", async () => {
    const run = runCli("test", ["--help"]);
    expect(await run.exit).toBe(0);
    expect(run.stdout()).toMatch(/--metrics-port .*\(default: off\)/);
  });

  for (const [value, message] of [
    ["abc", /--metrics-port must be an integer/],
    ["70000", /--metrics-port must be at most 65535/],
    ["80", /--metrics-port must be 0 \(a free port\) or at least 1024, got 80/],
  ] as const)
    it(`refuses --metrics-port ${value} with 254 before anything starts`, async () => {
      const store = tempRunDir("fc-metrics-bad-");
      const run = runCli("test", ["--metrics-port", value, "--store", store]);
      expect(await run.exit, run.stderr()).toBe(254);
      expect(run.stderr()).toMatch(message);
      expect(readdirSync(store).filter((f) => f !== "logs")).toEqual([]);
    });

  it("refuses a taken --metrics-port with 254 before anything starts", async () => {
    const store = tempRunDir("fc-metrics-taken-");
    const taken = await takenPort();
    const port = taken.port;
    try {
      const run = runCli("test", ["--metrics-port", String(port), "--store", store]);
      expect(await run.exit, run.stderr()).toBe(254);
      expect(run.stderr()).toContain(`--metrics-port ${port}: 127.0.0.1:${port} cannot be bound (EADDRINUSE)`);
      expect(existsSync(latestRun(store))).toBe(false);
    } finally {
      taken.close();
    }
  });
});
