// --deploy external: a cluster of the user's, here servers this test starts
// itself and hands over by address only. fencecheck starts no server, still puts
// its fault proxy between the workers and each one (partitions work), controls a
// server only through the commands it was given, and leaves no key of the run.
import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { join } from "node:path";
import { readFileSync, realpathSync, writeFileSync, readdirSync } from "node:fs";
import { Redis } from "ioredis";
import { ProcessGroup } from "../../cluster/processes.ts";
import { PortPlan } from "../../cluster/ports.ts";
import { startRedisNodes } from "../../backends/redis/server.ts";
import type { ServerNode } from "../../cluster/cluster.ts";
import { startEtcdCluster, type EtcdCluster } from "../../backends/etcd/server.ts";
import { startProxyServer, type ProxyServer } from "../../proxy/index.ts";
import { EtcdAdmin } from "../../backends/etcd/admin.ts";
import { tempRunDir, runCli, latestRun, readNdjson } from "../helpers.ts";

let dir: string;
let group: ProcessGroup;
let redis: ServerNode;
/** Five more, for a Redlock of the user's. */
let redlock: ServerNode[];
let proxy: ProxyServer;
let etcd: EtcdCluster;
// Each run asks for a fault of its kind and a hold or two, not for many: the first fault
// comes 0.1-0.5 s in (nemesis/schedule.ts), so 3 s hold several.
const short = ["--deploy", "external", "--concurrency", "4", "--workers", "2", "--nemesis-interval", "1", "--time-limit", "3", "--seed", "4"];

beforeAll(async () => {
  dir = tempRunDir("fc-external-");
  group = new ProcessGroup(dir);
  const ports = new PortPlan(0);
  [redis, ...redlock] = await startRedisNodes(group, ports, 6, { runDir: dir });
  proxy = await startProxyServer({ port: 0 });
  etcd = await startEtcdCluster({ group, ports: new PortPlan(0), runDir: dir, toxiproxyUrl: proxy.url });
});

afterAll(async () => {
  await group?.stopAll();
  await proxy?.close();
});

function stored(store: string) {
  const d = realpathSync(latestRun(store));
  return { run: JSON.parse(readFileSync(join(d, "run.json"), "utf8")), events: readNdjson(join(d, "history.ndjson")).slice(1), results: JSON.parse(readFileSync(join(d, "results.json"), "utf8")) };
}

describe("--deploy external", () => {
  it("a Redlock of the user's: five servers by name, every one's keys of the run removed", async () => {
    const store = tempRunDir("fc-external-");
    const endpoints = redlock.map((n, i) => `redis-${i + 1}=${n.host}:${n.port}`).join(",");
    const cli = runCli("test", [...short, "--backend", "redlock", "--endpoints", endpoints, "--nemesis", "pause", "--store", store]);
    expect([0, 1], cli.stdout() + cli.stderr()).toContain(await cli.exit);
    const { run, events } = stored(store);
    expect(run.servers.map((s: { port: number }) => s.port)).toEqual(redlock.map((n) => n.port));
    expect(run.keys_removed).toBeGreaterThan(0);
    expect(events.some((e) => e.f === "acquire" && e.type === "ok")).toBe(true);
    for (const n of redlock) {
      const r = new Redis({ host: n.host, port: n.port });
      expect(await r.keys("*"), n.name).toEqual([]);
      r.disconnect();
    }
  });

  it("a Redis of the user's: partitions through the fault proxy, the run's keys under its prefix and removed, others' kept", async () => {
    const r = new Redis({ host: redis.host, port: redis.port });
    await r.set("theirs", "1");
    const store = tempRunDir("fc-external-");
    const cli = runCli("test", [...short, "--endpoints", `${redis.host}:${redis.port}`, "--nemesis", "partition", "--store", store]);
    expect([0, 1], cli.stdout() + cli.stderr()).toContain(await cli.exit);
    const { run, events } = stored(store);
    expect(run.servers).toEqual([{ name: "redis-1", host: redis.host, port: redis.port }]);
    expect(run.key_prefix).toMatch(/^fencecheck:\d{8}T\d{6}\.\d{3}Z:$/);
    expect(run.keys_removed).toBeGreaterThan(0);
    expect(events.some((e) => e.f === "start-partition")).toBe(true);
    expect(events.find((e) => e.f === "acquire" && e.type === "invoke")?.key).toBe(`${run.key_prefix}k0`);
    // The resource takes keys with the prefix's colons.
    expect(events.some((e) => e.f === "write" && e.type === "ok")).toBe(true);
    expect(await r.keys("*")).toEqual(["theirs"]);
    r.disconnect();
  });

  it("a soak of the user's own cluster: a matrix's --deploy external configurations, the endpoints file relative to where the soak runs, no key of theirs left", async () => {
    const r = new Redis({ host: redis.host, port: redis.port });
    await r.set("theirs-too", "1");
    const project = tempRunDir("fc-external-");
    const pid = group.get("redis-1")!.pid;
    writeFileSync(join(project, "staging.json"), JSON.stringify({ servers: [{ name: "redis-1", host: redis.host, port: redis.port, control: { pause: `kill -STOP ${pid}`, resume: `kill -CONT ${pid}` } }] }));
    const external = { deploy: "external", endpoints: "./staging.json", concurrency: 4, workers: 2, "nemesis-interval": 1, "time-limit": 3 };
    writeFileSync(
      join(project, "locks.json"),
      JSON.stringify({
        name: "staging",
        configurations: [{ name: "staging-server-pause-fenced", options: { ...external, nemesis: "pause-server", fence: "on" }, expect: "valid" }],
      }),
    );
    const soak = runCli("soak", ["--matrix", "locks.json", "--jobs", "1", "--store", "histories", "--seed", "5"], {}, project);
    expect(await soak.exit, soak.stdout() + soak.stderr()).toBe(0);
    expect(soak.stdout()).toMatch(/^PASSED/m);
    const records = readNdjson(join(project, "histories", "soaks", "latest", "runs.ndjson"));
    expect(records.map((x) => x.status)).toEqual(["valid"]);
    for (const rec of records) {
      const runDir = join(project, "histories", "soaks", "latest", String(rec.run_dir));
      const info = JSON.parse(readFileSync(join(runDir, "run.json"), "utf8"));
      expect(info.servers).toEqual([{ name: "redis-1", host: redis.host, port: redis.port }]);
      expect(info.keys_removed).toBeGreaterThan(0);
      // The server itself was frozen and thawed through the file's commands.
      const faults = readNdjson(join(runDir, "history.ndjson")).filter((e) => e.process === "nemesis").map((e) => e.f);
      expect(faults).toContain("start-pause");
    }
    expect((await r.keys("*")).sort()).toEqual(["theirs", "theirs-too"]);
    r.disconnect();
  });

  it("pause-server is refused without control commands, and works through them", async () => {
    const store = tempRunDir("fc-external-");
    const refused = runCli("test", [...short, "--endpoints", `${redis.host}:${redis.port}`, "--nemesis", "pause-server", "--store", store]);
    expect(await refused.exit).toBe(254);
    expect(refused.stderr()).toMatch(/--nemesis pause-server needs a "pause" control command for every server, and redis-1 has none/);
    const pid = group.get("redis-1")!.pid;
    const file = join(store, "endpoints.json");
    writeFileSync(file, JSON.stringify({ servers: [{ name: "redis-1", host: redis.host, port: redis.port, control: { pause: `kill -STOP ${pid}`, resume: `kill -CONT ${pid}` } }] }));
    const cli = runCli("test", [...short, "--endpoints", file, "--nemesis", "pause-server", "--store", store]);
    expect(await cli.exit, cli.stdout() + cli.stderr()).toBe(0);
    const { events } = stored(store);
    expect(events.filter((e) => e.f === "start-pause").length).toBeGreaterThan(0);
    expect(events.filter((e) => e.f === "stop-pause").length).toBe(events.filter((e) => e.f === "start-pause").length);
  });

  it("pause-server on the user's etcd: refused without control commands, and works through them", async () => {
    const store = tempRunDir("fc-external-");
    const endpoints = etcd.nodes.map((m) => `${m.name}=${m.host}:${m.port}`).join(",");
    const refused = runCli("test", [...short, "--backend", "etcd", "--endpoints", endpoints, "--nemesis", "pause-server", "--store", store]);
    expect(await refused.exit).toBe(254);
    expect(refused.stderr()).toMatch(/--nemesis pause-server needs a "pause" control command for every server, and etcd-1 has none/);
    const file = join(store, "endpoints.json");
    const servers = etcd.nodes.map((m) => {
      const pid = group.get(m.name)!.pid;
      return { name: m.name, host: m.host, port: m.port, control: { pause: `kill -STOP ${pid}`, resume: `kill -CONT ${pid}` } };
    });
    writeFileSync(file, JSON.stringify({ servers }));
    const cli = runCli("test", [...short, "--backend", "etcd", "--endpoints", file, "--key-prefix", "fc-ext-pause:", "--nemesis", "pause-server", "--store", store]);
    expect([0, 1], cli.stdout() + cli.stderr()).toContain(await cli.exit);
    const { events } = stored(store);
    expect(events.filter((e) => e.f === "start-pause").length).toBeGreaterThan(0);
    expect(events.filter((e) => e.f === "stop-pause").length).toBe(events.filter((e) => e.f === "start-pause").length);
    // Every member runs again (a paused one would not answer).
    for (const m of etcd.nodes) expect(readFileSync(`/proc/${group.get(m.name)!.pid}/stat`, "utf8").split(") ")[1][0]).not.toBe("T");
  });

  it("an etcd cluster of the user's: partitions through the fault proxy, and no key of the run is left on it", async () => {
    const store = tempRunDir("fc-external-");
    const endpoints = etcd.nodes.map((m) => `${m.name}=${m.host}:${m.port}`).join(",");
    // A queue key without a lease under the run's prefix (on a key the run does not use: it would jam the queue), as a run killed mid-hold could leave.
    const admin = new EtcdAdmin("etcd-1", etcd.nodes[0].port);
    const kv = (admin as unknown as { client: { put(k: string): { value(v: string): Promise<unknown> }; getAll(): { keys(): Promise<string[]> } } }).client;
    await kv.put("fencecheck/queue/fc-ext-test:k9/dead").value("left over");
    await kv.put("someone/elses").value("kept");
    const cli = runCli("test", [...short, "--backend", "etcd", "--endpoints", endpoints, "--key-prefix", "fc-ext-test:", "--nemesis", "partition", "--store", store]);
    expect([0, 1], cli.stdout() + cli.stderr()).toContain(await cli.exit);
    const { run, results, events } = stored(store);
    expect(results.valid).not.toBe("unknown");
    // Its keys die with their leases as the holds end; what is left (here the
    // planted key) is deleted at the end.
    expect(events.some((e) => e.f === "acquire" && e.type === "ok" && String(e.key).startsWith(run.key_prefix))).toBe(true);
    // The partitions went through the run's fault proxy in front of the user's members.
    expect(events.some((e) => e.f === "start-partition")).toBe(true);
    expect(events.some((e) => e.f === "stop-partition")).toBe(true);
    expect(run.key_prefix).toBe("fc-ext-test:");
    expect(run.keys_removed).toBeGreaterThanOrEqual(1);
    const all = await kv.getAll().keys();
    admin.close();
    expect(all.filter((k) => k.includes("fc-ext-test:"))).toEqual([]);
    expect(all).toContain("someone/elses");
  });

  for (const [what, args, message] of [
    ["no --endpoints", [], /--deploy external needs --endpoints: the servers of your redis \(redis-1\)/],
    ["the wrong number of servers", ["--backend", "redlock", "--endpoints", "127.0.0.1:1,127.0.0.1:2"], /this backend has 5 servers \(redis-1, redis-2, redis-3, redis-4, redis-5\), and 2 were given/],
    ["an address that is not host:port", ["--endpoints", "localhost"], /"localhost" is not host:port or name=host:port/],
    ["a JSON file that is not there", ["--endpoints", "/no/such/endpoints.json"], /--endpoints \/no\/such\/endpoints.json: no such file/],
    ["the clock nemesis", ["--endpoints", "127.0.0.1:7", "--nemesis", "clock"], /--nemesis clock cannot move the clocks of an external cluster's servers/],
    ["--endpoints without --deploy external", ["--deploy", "local", "--endpoints", "127.0.0.1:7"], /--endpoints names servers of your own, for --deploy external/],
  ] as const)
    it(`${what}: exit 254, nothing stored`, async () => {
      const store = tempRunDir("fc-external-bad-");
      const cli = runCli("test", ["--deploy", "external", ...args, "--time-limit", "1", "--store", store]);
      expect(await cli.exit).toBe(254);
      expect(cli.stderr()).toMatch(message);
      expect(readdirSync(store).filter((f) => f !== "logs")).toEqual([]);
    });
});
