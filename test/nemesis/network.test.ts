// Network faults end to end, through the fault proxy: partitions show in the
// history and in the clients' outcomes; latency past the lease gives a stale write
// (K2); --toxiproxy makes the links in a Toxiproxy-compatible server we do not own
// and removes them afterwards, and refuses one that is not there, or lacks a toxic
// the backend needs, before starting anything.
import { describe, it, expect } from "vitest";
import { join } from "node:path";
import { readdirSync, readFileSync } from "node:fs";
import { Toxiproxy } from "toxiproxy-node-client";
import { startProxyServer } from "../../proxy/index.ts";
import { tempRunDir, runCli, latestRun, readNdjson, processesMentioning } from "../helpers.ts";

const short = ["--concurrency", "4", "--workers", "2", "--work", "5", "--seed", "3"];

function load(store: string) {
  const dir = latestRun(store);
  return {
    events: readNdjson(join(dir, "history.ndjson")).slice(1),
    run: JSON.parse(readFileSync(join(dir, "run.json"), "utf8")),
    results: JSON.parse(readFileSync(join(dir, "results.json"), "utf8")),
  };
}

describe("network nemeses", () => {
  it("a partition (isolate-one, silent drops) is recorded with its links, and cut-off clients see timeouts", async () => {
    const store = tempRunDir("fc-part-");
    const cli = runCli("test", [...short, "--nemesis", "partition", "--partition", "isolate-one", "--nemesis-interval", "0.5", "--fault-min", "1500", "--fault-max", "2000", "--command-timeout", "500", "--time-limit", "4", "--store", store]);
    expect([0, 1]).toContain(await cli.exit);
    const { events, run } = load(store);
    const start = events.find((e) => e.f === "start-partition") as { value: { targets: string[]; grudge: string } } | undefined;
    expect(start?.value.grudge).toBe("isolate-one");
    // One lock server, two workers: isolating it cuts both workers' links to it.
    expect(start?.value.targets.sort()).toEqual(["worker-1->redis-1", "worker-2->redis-1"]);
    expect(events.some((e) => e.f === "stop-partition")).toBe(true);
    expect(events.some((e) => e.type === "info" && e.error === "timeout")).toBe(true);
    expect(run.links.map((l: { name: string }) => l.name)).toContain("worker-1->resource");
    // A partition closes a link's listener until the heal: its port is one of our
    // own range (20000-32767), below the ephemeral one, which anyone could take meanwhile.
    const ports = run.links.map((l: { port: number }) => l.port);
    expect(ports.filter((p: number) => p < 20000 || p > 32767)).toEqual([]);
  });

  it("--partition-mode reset refuses connections instead", async () => {
    const store = tempRunDir("fc-part-");
    const cli = runCli("test", [...short, "--nemesis", "partition", "--partition", "isolate-one", "--partition-mode", "reset", "--nemesis-interval", "0.5", "--fault-min", "1500", "--fault-max", "2000", "--time-limit", "4", "--store", store]);
    expect([0, 1]).toContain(await cli.exit);
    const { events } = load(store);
    expect(events.find((e) => e.f === "start-partition")).toMatchObject({ value: { mode: "reset" } });
    expect(events.some((e) => e.process !== "nemesis" && e.type !== "ok" && e.type !== "invoke" && /conn-/.test(String(e.error)))).toBe(true);
  });

  it("latency past the lease makes a slow holder's write land after the next holder's (K2)", async () => {
    const store = tempRunDir("fc-lat-");
    // 100 ms of work per hold keeps the one key busy, as in a default run: only a
    // fault that slows a holder (not a worker that must first win the lock against
    // clients retrying every 10-30 ms) makes the stale write here.
    const cli = runCli("test", [...short, "--work", "100", "--nemesis", "latency", "--fence", "off", "--ttl", "500", "--nemesis-interval", "0.5", "--fault-min", "1500", "--fault-max", "1500", "--time-limit", "8", "--store", store]);
    expect(await cli.exit, cli.stdout()).toBe(1);
    const { events, results } = load(store);
    expect(events.some((e) => e.f === "start-latency")).toBe(true);
    expect(results.anomaly_types).toContain("stale-write-accepted");
  });

  it("--toxiproxy makes the run's links in another server and removes them afterwards", async () => {
    const server = await startProxyServer({ port: 0 });
    try {
      const store = tempRunDir("fc-tp-");
      const cli = runCli("test", [...short, "--toxiproxy", server.url, "--nemesis", "partition", "--nemesis-interval", "0.5", "--fault-min", "500", "--fault-max", "800", "--time-limit", "3", "--store", store]);
      expect([0, 1], cli.stderr()).toContain(await cli.exit);
      const { events, run } = load(store);
      expect(events.some((e) => e.f === "start-partition")).toBe(true);
      expect(run.links.length).toBe(4);
      // No proxy process of the run's: the server is the user's, said in run.json.
      expect(run.fault_proxy).toEqual({ server: "toxiproxy", url: server.url, version: expect.stringMatching(/^fencecheck-proxy /) });
      expect(await new Toxiproxy(server.url).getAll()).toEqual({});
      expect(processesMentioning(store)).toEqual([]);
    } finally {
      await server.close();
    }
  });

  it("--toxiproxy where nothing answers is bad input: 254, nothing started or stored", async () => {
    const store = tempRunDir("fc-tp-none-");
    const cli = runCli("test", [...short, "--toxiproxy", "http://127.0.0.1:9", "--time-limit", "3", "--store", store]);
    expect(await cli.exit, cli.stderr()).toBe(254);
    expect(cli.stderr()).toMatch(/--toxiproxy http:\/\/127\.0\.0\.1:9: no Toxiproxy answers there/);
    expect(readdirSync(store).filter((n) => n !== "logs")).toEqual([]);
  });

  it("--backend etcd with a Toxiproxy that lacks block_from is bad input naming the toxic and why; its probe proxy is removed", async () => {
    // Our proxy with only Toxiproxy's toxics answers block_from as a real Toxiproxy does.
    const server = await startProxyServer({ port: 0, toxiproxyOnly: true });
    try {
      const store = tempRunDir("fc-tp-etcd-");
      const cli = runCli("test", ["--backend", "etcd", "--nemesis", "partition", "--toxiproxy", server.url, "--time-limit", "3", "--store", store]);
      expect(await cli.exit, cli.stderr()).toBe(254);
      expect(cli.stderr()).toMatch(/does not know the block_from toxic .*--backend etcd needs it for member-to-member partitions/);
      expect(readdirSync(store).filter((n) => n !== "logs")).toEqual([]);
      expect(await new Toxiproxy(server.url).getAll()).toEqual({});
      expect(processesMentioning(store)).toEqual([]);
    } finally {
      await server.close();
    }
  });

  it("--backend etcd under latency runs on a Toxiproxy that lacks block_from: members meet through peer proxies that carry no toxic", async () => {
    const server = await startProxyServer({ port: 0, toxiproxyOnly: true });
    try {
      const store = tempRunDir("fc-tp-etcd-latency-");
      const cli = runCli("test", [...short, "--backend", "etcd", "--nemesis", "latency", "--nemesis-interval", "1", "--toxiproxy", server.url, "--time-limit", "3", "--store", store]);
      const code = await cli.exit;
      // Valid or not is the lock's business; bad input or a crash would be ours.
      expect([0, 1, 2], cli.stderr()).toContain(code);
      const run = JSON.parse(readFileSync(join(latestRun(store), "run.json"), "utf8")) as { options: { serverOptions: { memberPartitions: string } } };
      expect(run.options.serverOptions.memberPartitions).toBe("none");
      expect(readNdjson(join(latestRun(store), "history.ndjson")).some((e) => e.f === "start-latency")).toBe(true);
      // The run removed every proxy it made there, peer proxies included.
      expect(await new Toxiproxy(server.url).getAll()).toEqual({});
    } finally {
      await server.close();
    }
  });
});
