// --deploy external behind a Toxiproxy of the user's: a Redis this test starts,
// and our fault proxy started on its own as a real Toxiproxy would be (`npm run
// proxy -- --toxics toxiproxy`), with a proxy made in front of the Redis through
// its HTTP API as a user would. The run must go through that proxy (its toxics
// appear on it while the run goes on, and no lock is granted while it is cut),
// leave it as it was (there, enabled, with the user's toxics and none of ours),
// and leave no key of its own on the server.
import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { join } from "node:path";
import { readFileSync, realpathSync, writeFileSync, readdirSync } from "node:fs";
import { Redis } from "ioredis";
import { ProcessGroup } from "../../cluster/processes.ts";
import { PortPlan } from "../../cluster/ports.ts";
import { startRedisNodes } from "../../backends/redis/server.ts";
import type { ServerNode } from "../../cluster/cluster.ts";
import { checkUserProxies } from "../../cluster/external-proxies.ts";
import { tempRunDir, runCli, latestRun, readNdjson, waitFor, type CliRun, grantsIn } from "../helpers.ts";

interface ProxyJson {
  name: string;
  listen: string;
  upstream: string;
  enabled: boolean;
  toxics: Array<{ name: string; type: string }>;
}

let dir: string;
let group: ProcessGroup;
let redis: ServerNode;
let toxiproxy: CliRun;
let url: string;
// A run asks for faults of its kinds and holds around them, not for many: the first
// fault comes within half an interval (nemesis/schedule.ts), so 5 s hold two or three.
const short = ["--deploy", "external", "--concurrency", "4", "--workers", "2", "--nemesis-interval", "2", "--fault-max", "2000", "--time-limit", "5", "--seed", "4"];

async function api<T>(path: string, method = "GET", body?: unknown): Promise<T> {
  const res = await fetch(`${url}${path}`, { method, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return (res.status === 204 ? null : await res.json()) as T;
}

beforeAll(async () => {
  dir = tempRunDir("fc-ext-toxi-");
  group = new ProcessGroup(dir);
  [redis] = await startRedisNodes(group, new PortPlan(0), 1, { runDir: dir });
  // Only Toxiproxy's own toxics, as in a real Toxiproxy.
  toxiproxy = runCli("proxy", ["--port", "0", "--toxics", "toxiproxy"]);
  expect(await waitFor(() => /"port":\d+/.test(toxiproxy.stdout()), 20_000), toxiproxy.stderr()).toBe(true);
  url = `http://127.0.0.1:${JSON.parse(toxiproxy.stdout().split("\n")[0]).port}`;
  await api("/proxies", "POST", { name: "redis-main", listen: "127.0.0.1:0", upstream: `127.0.0.1:${redis.port}` });
});

afterAll(async () => {
  if (toxiproxy?.child.pid) process.kill(-toxiproxy.child.pid, "SIGTERM");
  await toxiproxy?.exit;
  await group?.stopAll();
});

function stored(store: string) {
  const d = realpathSync(latestRun(store));
  return { run: JSON.parse(readFileSync(join(d, "run.json"), "utf8")), events: readNdjson(join(d, "history.ndjson")).slice(1) };
}

/** The toxics on the user's proxy, every 100 ms while the run goes on: what the run did to it. */
function watchToxics(): { seen: Set<string>; stop: () => void } {
  const seen = new Set<string>();
  const timer = setInterval(() => {
    api<ProxyJson["toxics"]>("/proxies/redis-main/toxics").then((ts) => ts.forEach((t) => seen.add(`${t.name} ${t.type}`)), () => {});
  }, 100);
  return { seen, stop: () => clearInterval(timer) };
}

function endpointsFile(store: string, content: unknown): string {
  const file = join(store, "endpoints.json");
  writeFileSync(file, JSON.stringify(content));
  return file;
}

describe("--deploy external through a proxy of the user's", () => {
  it("partitions put toxics on that proxy, no lock is granted while it is cut, and it is left as it was", async () => {
    const r = new Redis({ host: redis.host, port: redis.port });
    await r.set("theirs", "1");
    const store = tempRunDir("fc-ext-toxi-");
    const file = endpointsFile(store, { toxiproxy: url, servers: [{ name: "redis-1", host: "127.0.0.1", port: redis.port, proxy: "redis-main" }] });
    const watch = watchToxics();
    const cli = runCli("test", [...short, "--endpoints", file, "--nemesis", "partition", "--partition", "isolate-one", "--store", store]);
    const exit = await cli.exit;
    watch.stop();
    // Fencing on, and a single Redis: valid.
    expect(exit, cli.stdout() + cli.stderr()).toBe(0);

    const { run, events } = stored(store);
    const proxy = await api<ProxyJson>("/proxies/redis-main");
    const listenPort = Number(proxy.listen.slice(proxy.listen.lastIndexOf(":") + 1));
    const toRedis = run.links.filter((l: { server: string }) => l.server === "redis-1");
    expect(toRedis.map((l: { proxy: string; port: number; shared: boolean }) => [l.proxy, l.port, l.shared])).toEqual([
      ["redis-main", listenPort, true],
      ["redis-main", listenPort, true],
    ]);
    expect(run.options.toxiproxy).toBe(url);
    expect([...watch.seen].filter((t) => /^fc-\d+-partition-/.test(t)).sort()).toEqual([
      expect.stringMatching(/^fc-\d+-partition-downstream timeout$/),
      expect.stringMatching(/^fc-\d+-partition-upstream timeout$/),
    ]);

    const starts = events.filter((e) => e.f === "start-partition");
    expect(starts.length).toBeGreaterThan(0);
    for (const s of starts) expect(s.value).toMatchObject({ grudge: "isolate-one", shared_proxies: ["redis-main"], targets: ["worker-1->redis-1", "worker-2->redis-1"] });
    // The one Redis is cut off from every worker: no acquire can be granted inside
    // a partition (a reply already on its way when it began gets 100 ms).
    const windows = starts.map((s) => [Number(s.time) + 100e6, Number(events.find((e) => e.f === "stop-partition" && Number(e.time) > Number(s.time))?.time ?? Infinity)]);
    const granted = grantsIn(events);
    expect(granted.length).toBeGreaterThan(0);
    expect(granted.filter((e) => windows.some(([a, b]) => Number(e.time) > a && Number(e.time) < b))).toEqual([]);
    expect(events.some((e) => e.f === "write" && e.type === "ok")).toBe(true);

    expect(proxy).toMatchObject({ name: "redis-main", upstream: `127.0.0.1:${redis.port}`, enabled: true, toxics: [] });
    expect(await r.keys("*")).toEqual(["theirs"]);
    r.disconnect();
  });

  it("latency and reset partitions on it keep the user's own toxic; a server given by its proxy alone is reached through it", async () => {
    await api("/proxies/redis-main/toxics", "POST", { name: "users-own", type: "latency", stream: "downstream", toxicity: 1, attributes: { latency: 1, jitter: 0 } });
    try {
      const store = tempRunDir("fc-ext-toxi-");
      // The same Toxiproxy in the file (with a trailing slash) and on the command line is no conflict.
      const file = endpointsFile(store, { toxiproxy: `${url}/`, servers: [{ proxy: "redis-main" }] });
      const watch = watchToxics();
      const cli = runCli("test", [
        ...short,
        "--endpoints", file,
        "--toxiproxy", url,
        "--nemesis", "partition,latency",
        "--partition-mode", "reset",
        "--nemesis-interval", "1",
        "--store", store,
      ]);
      const exit = await cli.exit;
      watch.stop();
      expect(exit, cli.stdout() + cli.stderr()).toBe(0);
      expect(cli.stderr()).toMatch(/warning: redis-1's proxy "redis-main" already has toxics \(users-own\)/);
      const seen = [...watch.seen];
      // Reset mode never disables the user's proxy: it resets connections with a toxic.
      expect(seen).toContainEqual(expect.stringMatching(/^fc-\d+-partition-upstream reset_peer$/));
      expect(seen).toContainEqual(expect.stringMatching(/^fc-\d+-latency-upstream latency$/));

      const { run, events } = stored(store);
      const proxy = await api<ProxyJson>("/proxies/redis-main");
      expect(events.filter((e) => e.f === "start-latency").map((e) => (e.value as { shared_proxies: string[] }).shared_proxies)).toContainEqual(["redis-main"]);
      expect(run.servers).toEqual([{ name: "redis-1", host: "127.0.0.1", port: Number(proxy.listen.slice(proxy.listen.lastIndexOf(":") + 1)) }]);
      expect(run.keys_removed).toBeGreaterThan(0);
      expect(proxy.enabled).toBe(true);
      expect(proxy.toxics.map((t) => t.name)).toEqual(["users-own"]);
      const r = new Redis({ host: redis.host, port: redis.port });
      expect((await r.keys("*")).filter((k) => k.startsWith(run.key_prefix))).toEqual([]);
      r.disconnect();
    } finally {
      await api("/proxies/redis-main/toxics/users-own", "DELETE");
    }
  });

  it("an upstream other than the address given is a warning; the same server by another loopback name is none", async () => {
    const other = await checkUserProxies(url, [{ name: "redis-1", host: "127.0.0.1", port: redis.port + 1, proxy: "redis-main" }]);
    expect(other).toEqual([`redis-1's proxy "redis-main" forwards to 127.0.0.1:${redis.port}, and redis-1 was given as 127.0.0.1:${redis.port + 1}: the same server only if that is how the Toxiproxy reaches it`]);
    expect(await checkUserProxies(url, [{ name: "redis-1", host: "localhost", port: redis.port, proxy: "redis-main" }])).toEqual([]);
  });

  it("a proxy of the user's that is disabled: exit 254, and it stays disabled", async () => {
    await api("/proxies", "POST", { name: "redis-off", listen: "127.0.0.1:0", upstream: `127.0.0.1:${redis.port}`, enabled: false });
    try {
      const store = tempRunDir("fc-ext-toxi-bad-");
      const file = endpointsFile(store, { toxiproxy: url, servers: [{ proxy: "redis-off" }] });
      const cli = runCli("test", ["--deploy", "external", "--endpoints", file, "--time-limit", "1", "--store", store]);
      expect(await cli.exit, cli.stderr()).toBe(254);
      expect(cli.stderr()).toMatch(new RegExp(`redis-1's proxy "redis-off" on ${url} is disabled`));
      expect((await api<ProxyJson>("/proxies/redis-off")).enabled).toBe(false);
    } finally {
      await api("/proxies/redis-off", "DELETE");
    }
  });

  const server = (extra: Record<string, unknown> = {}) => ({ name: "redis-1", host: "127.0.0.1", port: 7, ...extra });
  for (const [what, content, args, message] of [
    ["a proxy the Toxiproxy does not have", () => ({ toxiproxy: url, servers: [server({ proxy: "no-such-proxy" })] }), [], () => new RegExp(`redis-1's proxy "no-such-proxy" is not on the Toxiproxy at ${url}`)],
    ["two Toxiproxies", () => ({ toxiproxy: url, servers: [server()] }), ["--toxiproxy", "http://127.0.0.1:9"], () => new RegExp(`--toxiproxy http://127.0.0.1:9 and the Toxiproxy of --endpoints .*endpoints.json \\("toxiproxy": ${url}\\) differ`)],
    ["a proxy and no Toxiproxy", () => ({ servers: [server({ proxy: "redis-main" })] }), [], () => /redis-1 is behind your proxy "redis-main", and no Toxiproxy is given to find it on/],
    ["a grudge that splits the workers", () => ({ toxiproxy: url, servers: [server({ proxy: "redis-main" })] }), ["--nemesis", "partition", "--partition", "isolate-one,majority-minority"], () => /--partition majority-minority cuts some workers off from a server and not others, and redis-1 \(redis-main\) is behind a proxy of yours/],
    ["two servers behind one proxy", () => ({ toxiproxy: url, servers: ["redis-1", "redis-2", "redis-3", "redis-4", "redis-5"].map((name, i) => ({ name, host: "127.0.0.1", port: 7 + i, ...(i < 2 ? { proxy: "redis-main" } : {}) })) }), ["--backend", "redlock"], () => /two servers name the proxy "redis-main"/],
    ["a server with neither address nor proxy", () => ({ toxiproxy: url, servers: [{ name: "redis-1" }] }), [], () => /servers\[0\]: "host" must be a host name or address \(or give "proxy"/],
  ] as const)
    it(`${what}: exit 254, nothing stored, the user's proxy untouched`, async () => {
      const store = tempRunDir("fc-ext-toxi-bad-");
      const file = endpointsFile(store, content());
      const cli = runCli("test", ["--deploy", "external", "--endpoints", file, ...args, "--time-limit", "1", "--store", store]);
      expect(await cli.exit, cli.stderr()).toBe(254);
      expect(cli.stderr()).toMatch(message());
      expect(readdirSync(store).filter((f) => f !== "logs" && f !== "endpoints.json")).toEqual([]);
      expect(await api<Record<string, ProxyJson>>("/proxies")).toEqual({ "redis-main": expect.objectContaining({ enabled: true, toxics: [] }) });
    });
});
