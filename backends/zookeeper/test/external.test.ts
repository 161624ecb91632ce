// --backend zookeeper --deploy external: an ensemble of the user's, here three
// servers this file starts itself (backends/zookeeper/server.ts, through backends/zookeeper/test/servers.ts)
// and hands over by address only, with an application's nodes on it. A run keeps
// its nodes under its key prefix and deletes them all at the end, the parents it
// made included; a runner SIGKILLed mid-run leaves its keys' nodes, which the next
// run sweeps once the dead run's marker has expired, leaving a live run's, a live
// session's and the application's nodes alone. The runs are sequential: one
// ensemble, started once.
import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { existsSync, readFileSync, readdirSync, realpathSync } from "node:fs";
import { join } from "node:path";
import zookeeper from "node-zookeeper-client";
import { startZkServers, type ZkServers } from "./servers.ts";
import { catchUp } from "../session.ts";
import { BACKENDS } from "../../index.ts";
import { tempRunDir, runCli, latestRun, readNdjson, processesMentioning, waitFor, eventually, grantsIn } from "../../../test/helpers.ts";

const { CreateMode } = zookeeper;

let zk: ZkServers;
let endpoints: string;
/** A second session of the test's, for an ephemeral node that stays while it lives. */
let ghost: zookeeper.Client;

const short = ["--concurrency", "4", "--workers", "2", "--nemesis-interval", "1", "--time-limit", "3", "--seed", "4", "--fence", "on"];
const external = () => ["--backend", "zookeeper", "--deploy", "external", "--endpoints", endpoints];

function call<T>(send: (done: (err: Error | zookeeper.Exception | null, value: T) => void) => void): Promise<T> {
  return new Promise((resolve, reject) => send((err, value) => (err ? reject(err) : resolve(value))));
}

const create = (path: string, data = "", mode: number = CreateMode.PERSISTENT, client = zk.admin): Promise<string> =>
  call<string>((done) => client.create(path, Buffer.from(data), mode, done));
const dataOf = (path: string): Promise<string> => call<Buffer>((done) => zk.admin.getData(path, done)).then((b) => b.toString());
const exists = (path: string): Promise<boolean> => call<zookeeper.Stat | null>((done) => zk.admin.exists(path, done)).then((s) => s !== null);

/**
 * Every node of the ensemble but ZooKeeper's own (/zookeeper), depth first. The
 * admin session may be on a follower that has not applied what another session
 * just did through the leader (a CI run saw a deleted node still listed): it
 * catches up first, as the product's own reads do (session.ts catchUp).
 */
async function tree(path = "/"): Promise<string[]> {
  if (path === "/") await call<void>((done) => catchUp(zk.admin, "/", (err) => done(err as Error | null, undefined)));
  const out: string[] = [];
  // A live run's clients delete their lock nodes as the walk goes: a node listed
  // under its parent and gone before its own children are read is listed alone
  // (a fresh-clone run of 2026-12-01 threw NO_NODE here, and its run was never
  // stopped, which failed the five tests after it).
  const children = await call<string[]>((done) => zk.admin.getChildren(path, done)).catch((err: unknown) => {
    if (path !== "/" && err instanceof zookeeper.Exception && err.getCode() === zookeeper.Exception.NO_NODE) return null;
    throw err;
  });
  if (children === null) return [];
  for (const name of children.sort()) {
    const child = path === "/" ? `/${name}` : `${path}/${name}`;
    if (child === "/zookeeper") continue;
    out.push(child, ...(await tree(child)));
  }
  return out;
}

const runJson = (store: string) => JSON.parse(readFileSync(join(realpathSync(latestRun(store)), "run.json"), "utf8"));

/** A run of its own started, once its clients hold the lock: its run.json then. */
async function holding(store: string) {
  const run = runCli("test", [...external(), ...short, "--time-limit", "60", "--nemesis", "none", "--store", store]);
  const history = () => join(latestRun(store), "history.ndjson");
  try {
    expect(await waitFor(() => existsSync(history()) && readFileSync(history(), "utf8").includes('"type":"ok","f":"acquire"'), 60_000), run.stderr()).toBe(true);
  } catch (err) {
    process.kill(run.child.pid!, "SIGKILL");
    throw err;
  }
  return { run, prefix: runJson(store).key_prefix as string };
}

function stored(store: string) {
  const d = realpathSync(latestRun(store));
  return { run: runJson(store), events: readNdjson(join(d, "history.ndjson")).slice(1), results: JSON.parse(readFileSync(join(d, "results.json"), "utf8")) };
}

beforeAll(async () => {
  zk = await startZkServers("fc-zkext-");
  endpoints = zk.endpoints.map((e) => `${e.name}=${e.host}:${e.port}`).join(",");
  ghost = zookeeper.createClient(zk.endpoints.map((e) => `${e.host}:${e.port}`).join(","), { sessionTimeout: 10_000 });
  await new Promise<void>((resolve) => {
    ghost.once("connected", () => resolve());
    ghost.connect();
  });
  // An application of the user's.
  await create("/other-app");
  await create("/other-app/data", "theirs");
}, 60_000);

afterAll(async () => {
  ghost?.close();
  expect(await zk?.stop()).toEqual([]);
});

describe("--backend zookeeper --deploy external", () => {
  it("the recipe, fencing on, under partitions: valid; its nodes under its prefix, all deleted at the end with the parents it made", async () => {
    const before = await tree();
    expect(before).toEqual(["/other-app", "/other-app/data"]);
    const store = tempRunDir("fc-zkext-");
    const cli = runCli("test", [...external(), ...short, "--client", "zookeeper", "--nemesis", "partition", "--store", store]);
    expect(await cli.exit, cli.stdout() + cli.stderr()).toBe(0);
    const { run, events, results } = stored(store);
    expect(results.valid).toBe(true);
    expect(run.servers).toEqual(zk.endpoints);
    expect(run.key_prefix).toMatch(/^fencecheck:\d{8}T\d{6}\.\d{3}Z:$/);
    // No /fencecheck was there: the run made both parents, and took them away again.
    expect(run.zookeeper_run).toEqual({ marker: `/fencecheck/locks/${run.key_prefix}~run`, parents_made: ["/fencecheck", "/fencecheck/locks"], swept: { runs: [], nodes: 0 } });
    expect(run.keys_removed).toBeGreaterThanOrEqual(1);
    const granted = grantsIn(events);
    expect(granted.length).toBeGreaterThan(0);
    expect(granted.every((e) => e.key === `${run.key_prefix}k0`)).toBe(true);
    expect(events.some((e) => e.f === "write" && e.type === "ok")).toBe(true);
    // The partitions cut the workers' links through the run's fault proxy; the
    // members, which talk to each other directly, are not cut apart.
    const partitions = events.filter((e) => e.f === "start-partition");
    expect(partitions.length).toBeGreaterThan(0);
    expect(partitions.filter((e) => (e.value as { member_cuts?: unknown }).member_cuts !== undefined)).toEqual([]);
    expect(await tree()).toEqual(before);
    expect(await dataOf("/other-app/data")).toBe("theirs");
  });

  it("a runner SIGKILLed mid-run leaves its keys' nodes; the next run sweeps them once its marker expired, and leaves a live run's, a live session's and an application's alone", async () => {
    const crashedStore = tempRunDir("fc-zkext-kill-");
    const { run: crashed, prefix: dead } = await holding(crashedStore);
    process.kill(crashed.child.pid!, "SIGKILL");
    await crashed.exit;
    // The reaper took the workers; their sessions, and with them the lock nodes, expire.
    expect(await waitFor(() => processesMentioning(crashedStore).length === 0, 10_000)).toBe(true);
    expect(await exists(`/fencecheck/locks/${dead}k0`)).toBe(true);
    expect(await eventually(async () => !(await exists(`/fencecheck/locks/${dead}~run`)) && (await call<string[]>((d) => zk.admin.getChildren(`/fencecheck/locks/${dead}k0`, d))).length === 0, 30_000)).toBe(true);

    // By hand: a crashed run's nodes (one nested, as Curator's semaphore has
    // them, one under which a session still lives), a live run's (its marker held
    // by a session of the test's), and nodes of someone else's.
    const lost = "fencecheck:20200101T000000.000Z:";
    await create(`/fencecheck/locks/${lost}k0`);
    await create(`/fencecheck/locks/${lost}k1`);
    await create(`/fencecheck/locks/${lost}k1/leases`);
    await create(`/fencecheck/locks/${lost}k2`);
    await create(`/fencecheck/locks/${lost}k2/lock-0000000000`, "ghost", CreateMode.EPHEMERAL, ghost);
    await create("/fencecheck/locks/fencecheck:live-run:~run", "", CreateMode.EPHEMERAL);
    await create("/fencecheck/locks/fencecheck:live-run:k0");
    await create("/fencecheck/locks/not-ours", "theirs");
    await create("/fencecheck/locks/not-ours/child");
    const kept = [
      `/fencecheck/locks/${lost}k2`,
      `/fencecheck/locks/${lost}k2/lock-0000000000`,
      "/fencecheck/locks/fencecheck:live-run:k0",
      "/fencecheck/locks/fencecheck:live-run:~run",
      "/fencecheck/locks/not-ours",
      "/fencecheck/locks/not-ours/child",
    ];

    const store = tempRunDir("fc-zkext-");
    const cli = runCli("test", [...external(), ...short, "--client", "zookeeper-naive", "--nemesis", "none", "--store", store]);
    expect(await cli.exit, cli.stdout() + cli.stderr()).toBe(0);
    const { run, events } = stored(store);
    expect(events.some((e) => e.f === "acquire" && e.type === "ok" && e.key === `${run.key_prefix}k0`)).toBe(true);
    expect(run.zookeeper_run.parents_made).toEqual([]);
    expect(run.zookeeper_run.swept.runs.sort()).toEqual([dead, lost].sort());
    // The dead run's k0, and the hand-made k0, k1 and k1/leases.
    expect(run.zookeeper_run.swept.nodes).toBe(4);
    expect(run.keys_removed).toBeGreaterThanOrEqual(1);
    // Not the run's to delete: /fencecheck and /fencecheck/locks (the crashed run made them), and the rest.
    expect(await tree()).toEqual(["/fencecheck", "/fencecheck/locks", ...kept.sort(), "/other-app", "/other-app/data"].sort());
    expect(await dataOf("/fencecheck/locks/not-ours")).toBe("theirs");
  }, 150_000);

  it("Ctrl-C: the run's nodes are deleted by the teardown, ephemeral ones of live sessions included", async () => {
    const before = await tree();
    const store = tempRunDir("fc-zkext-int-");
    const { run, prefix } = await holding(store);
    expect((await tree()).filter((p) => p.includes(prefix)).length).toBeGreaterThan(1);
    process.kill(-run.child.pid!, "SIGINT");
    expect(await run.exit, run.stderr()).toBe(130);
    expect(runJson(store).keys_removed).toBeGreaterThanOrEqual(1);
    expect(await tree()).toEqual(before);
  }, 90_000);

  it("removeKeys (the registry's): every node under the prefix, an ephemeral one of a live session included, and nothing else", async () => {
    const before = await tree();
    const prefix = "fencecheck:by-hand:";
    await create(`/fencecheck/locks/${prefix}k0`);
    await create(`/fencecheck/locks/${prefix}k0/lock-0000000000`, "ghost", CreateMode.EPHEMERAL, ghost);
    // kazoo's Semaphore keeps its inner lock beside the key's node.
    await create(`/fencecheck/locks/${prefix}k0-__lock__`);
    // A live run whose longer prefix starts with this one keeps its nodes.
    const longer = `/fencecheck/locks/${prefix}more:`;
    await create(`${longer}~run`, "", CreateMode.EPHEMERAL, ghost);
    await create(`${longer}k0`);
    expect(await BACKENDS.zookeeper.removeKeys(zk.endpoints, prefix)).toBe(3);
    expect(await tree()).toEqual([...before, `${longer}k0`, `${longer}~run`].sort());
    await call<void>((done) => zk.admin.remove(`${longer}k0`, (err) => done(err, undefined)));
    await call<void>((done) => zk.admin.remove(`${longer}~run`, (err) => done(err, undefined)));
    expect(await tree()).toEqual(before);
    await expect(BACKENDS.zookeeper.removeKeys(zk.endpoints, "")).rejects.toThrow(/refusing to delete every lock node/);
  });

  for (const [what, args, message] of [
    ["an empty --key-prefix", ["--key-prefix", ""], /--key-prefix '' would put the run's nodes among everyone's under \/fencecheck\/locks/],
    ["a --key-prefix with a slash", ["--key-prefix", "mine/"], /--key-prefix "mine\/" has "\/", which a ZooKeeper node's name cannot hold/],
    ["the --key-prefix of a live run", ["--key-prefix", "fencecheck:live-run:"], /--key-prefix "fencecheck:live-run:" is taken: \/fencecheck\/locks\/fencecheck:live-run:~run says a run with it is going on/],
    ["a --key-prefix someone's nodes start with", ["--key-prefix", "not-"], /1 node under \/fencecheck\/locks already starts with --key-prefix "not-" \(not-ours\), which the run would take for its own/],
  ] as const)
    it(`${what}: exit 254, nothing stored, nothing changed on the ensemble`, async () => {
      const before = await tree();
      const store = tempRunDir("fc-zkext-bad-");
      const cli = runCli("test", [...external(), ...args, "--time-limit", "1", "--store", store]);
      expect(await cli.exit, cli.stderr()).toBe(254);
      expect(cli.stderr()).toMatch(message);
      expect(readdirSync(store).filter((f) => f !== "logs")).toEqual([]);
      expect(await tree()).toEqual(before);
    });

  it("an ensemble that does not answer: exit 254, naming the servers", async () => {
    const store = tempRunDir("fc-zkext-bad-");
    const cli = runCli("test", ["--backend", "zookeeper", "--deploy", "external", "--endpoints", "127.0.0.1:9,127.0.0.1:9,127.0.0.1:9", "--time-limit", "1", "--store", store]);
    expect(await cli.exit, cli.stderr()).toBe(254);
    expect(cli.stderr()).toMatch(/no ZooKeeper server of zk-1 \(127\.0\.0\.1:9\), zk-2 \(127\.0\.0\.1:9\), zk-3 \(127\.0\.0\.1:9\) took a session/);
    expect(readdirSync(store).filter((f) => f !== "logs")).toEqual([]);
  });
});
