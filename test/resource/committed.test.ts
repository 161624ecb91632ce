// --resource dynamodb and --resource postgres: the fencing decision is the
// database's (a conditional UpdateItem, a conditional UPDATE), and resource.ndjson
// says only what the store did (committed decisions): a write killed with its
// store mid-commit is logged `accepted: null`, every other line has the place the
// store gave it, and after the store comes back its table agrees with the log.
import { RESOURCE_STORES } from "../../backends/index.ts";
import { describe, it, expect, afterAll } from "vitest";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ScanCommand } from "@aws-sdk/client-dynamodb";
import { ResourceClient } from "../../clients/resource.ts";
import { dynamoClient } from "../../backends/dynamodb/connection.ts";
import { startDynalite, type DynaliteCluster } from "../../backends/dynamodb/server.ts";
import { ProcessGroup } from "../../cluster/processes.ts";
import { PortPlan } from "../../cluster/ports.ts";
import { logTableDisagreements, startResource, type ResourceHandle, type StoreRow } from "../../resource/index.ts";
import { newRunStart } from "../../store/clock.ts";
import type { ResourceDecision } from "../../store/events.ts";
import { decisionProblem } from "../../store/reader.ts";
import { sleep } from "../../lib/time.ts";
import { usePostgresServer } from "../../backends/postgres/test/server.ts";
import { tempDir } from "../helpers.ts";

const handles: ResourceHandle[] = [];
const groups: ProcessGroup[] = [];
afterAll(async () => {
  await Promise.all(handles.map((h) => h.stop()));
  await Promise.all(groups.map((g) => g.stopAll()));
});

/** The resource's own dynalite, as a run starts it (its LevelDB in the run directory), in a directory of the test's. */
async function resourceDb(): Promise<{ dir: string; db: DynaliteCluster }> {
  const dir = tempDir("fencecheck-dynamo-resource-");
  const group = new ProcessGroup(dir);
  groups.push(group);
  return { dir, db: await startDynalite(group, new PortPlan(0), { runDir: dir, name: "resource-db", persistent: true }) };
}

/** A store the resource decides in: how the resource is pointed at it, how it is killed and restarted, what its table holds. */
interface Store {
  dir: string;
  at: { store: { entry: string; config: Record<string, unknown> } };
  kill(): Promise<void>;
  restart(): Promise<void>;
  table(): Promise<Map<string, StoreRow>>;
}

async function dynamoStore(): Promise<Store> {
  const { dir, db } = await resourceDb();
  return {
    dir,
    at: { store: { entry: RESOURCE_STORES.dynamodb.decider, config: { host: db.node.host, port: db.node.port } } },
    kill: () => db.kill("resource-db"),
    restart: () => db.restart("resource-db"),
    async table() {
      const items = (await dynamoClient(db.node, 5000).send(new ScanCommand({ TableName: "fencecheck_resource", ConsistentRead: true }))).Items ?? [];
      return new Map(items.map((i) => [i.key.S!, { value: i.value?.S === undefined ? null : JSON.parse(i.value.S), fence: i.fence ? Number(i.fence.N) : null, decisions: Number(i.decisions.N) }]));
    },
  };
}

const pgServer = usePostgresServer(() => Promise.all(handles.map((h) => h.stop())));

async function pgStore(): Promise<Store> {
  const dir = tempDir("fencecheck-pg-resource-");
  const node = pgServer.node();
  return {
    dir,
    at: { store: { entry: RESOURCE_STORES.postgres.decider, config: { host: node.host, port: node.port } } },
    kill: () => pgServer.cluster().kill!(node.name),
    restart: () => pgServer.cluster().restart!(node.name),
    async table() {
      const rows = await pgServer.sql<{ key: string; value: unknown; fence: string | null; decisions: string }>("SELECT key, value, fence, decisions FROM fencecheck_resource");
      return new Map(rows.map((r) => [r.key, { value: r.value, fence: r.fence === null ? null : Number(r.fence), decisions: Number(r.decisions) }]));
    },
  };
}

async function resource(fencing: boolean, store: Store): Promise<{ client: ResourceClient; decisions: () => ResourceDecision[] }> {
  const logPath = join(store.dir, `resource-${handles.length}.ndjson`);
  const h = await startResource({ logPath, fencing, t0: newRunStart(), logFile: join(store.dir, `resource-${handles.length}.log`), ...store.at });
  handles.push(h);
  return {
    client: new ResourceClient(h.url),
    decisions: () => readFileSync(logPath, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l) as ResourceDecision),
  };
}

describe("the resource on DynamoDB", () => {
  it("refuses, in the table, a stale write sent to a process that never saw the newer one; each line has its place", async () => {
    const store = await dynamoStore();
    const a = await resource(true, store), b = await resource(true, store);
    expect(await a.client.write("d1", { owner: "h10", fence: 10, process: 0, data: "ten" })).toEqual({ type: "ok", fence: 10 });
    expect(await b.client.write("d1", { owner: "h9", fence: 9, process: 1, data: "nine" })).toMatchObject({ type: "fail", error: "stale-fence", seen: 10, got: 9 });
    expect(await a.client.read("d1", { owner: "h10", fence: 10, process: 0 })).toMatchObject({ type: "ok", data: "ten" });
    expect(a.decisions()).toMatchObject([
      { op: "write", fence: 10, max_before: null, accepted: true, order: 1 },
      { op: "read", accepted: true, data: "ten", order: 3 },
    ]);
    expect(b.decisions()).toMatchObject([{ op: "write", fence: 9, max_before: 10, accepted: false, order: 2 }]);
    expect((await store.table()).get("d1")).toEqual({ value: "ten", fence: 10, decisions: 3 });
  });
});

describe.each([
  ["dynamodb", dynamoStore],
  ["postgres", pgStore],
] as const)("the resource on %s", (_name, makeStore) => {

  it("a kill of its store during writes: lines of unknown outcome say null, and the log and the table agree", async () => {
    const store = await makeStore();
    const r = await resource(true, store);
    const keys = ["k1", "k2", "k3"];
    let fence = 0;
    let running = true;
    const outcomes = { ok: 0, refused: 0, unknown: 0 };
    // Eight writers, fences rising but sent out of order: some are stale when they arrive.
    const writer = async (w: number): Promise<void> => {
      for (let i = 0; running; i++) {
        const f = ++fence + (i % 3 === 0 ? -3 : 0);
        try {
          const out = await r.client.write(keys[(w + i) % keys.length], { owner: `w${w}-${i}`, fence: f, process: w, data: f }, { timeoutMs: 2000 });
          outcomes[out.type === "ok" ? "ok" : "refused"]++;
        } catch {
          outcomes.unknown++;
          await sleep(20);
        }
      }
    };
    const writers = Array.from({ length: 8 }, (_, w) => writer(w));
    await sleep(800);
    const before = r.decisions().length;
    await store.kill();
    await sleep(300);
    await store.restart();
    // Until writes are decided again, and a while after.
    const t = Date.now();
    while (r.decisions().length < before + 20 && Date.now() - t < 20_000) await sleep(100);
    await sleep(300);
    running = false;
    await Promise.all(writers);
    const lines = r.decisions();
    for (const l of lines) expect(decisionProblem(l)).toBeNull();
    // Writes were decided before the kill and after the restart.
    expect(before).toBeGreaterThan(10);
    expect(lines.length).toBeGreaterThan(before + 10);
    expect(outcomes.ok).toBeGreaterThan(0);
    expect(outcomes.refused).toBeGreaterThan(0);

    const state = await store.table();
    // The count, the places and each key's value and fence in the table are what the log allows.
    expect(logTableDisagreements(lines, state)).toEqual([]);
    const report: string[] = [];
    for (const key of keys) {
      const mine = lines.filter((l) => l.key === key);
      const known = mine.filter((l) => l.order !== null);
      const unknown = mine.filter((l) => l.accepted === null);
      // null only for an outcome unknown, and then without a place.
      expect(mine.filter((l) => l.order === null)).toEqual(unknown);
      // Fencing on: the accepted writes, in the store's order, have rising fences.
      const chain = known.filter((l) => l.accepted === true).sort((x, y) => x.order! - y.order!).map((l) => l.fence!);
      expect(chain).toEqual([...chain].sort((x, y) => x - y));
      const row = state.get(key)!;
      report.push(`${key}: ${mine.length} lines (${unknown.length} of unknown outcome), table decisions=${row.decisions} value=${row.value} fence=${row.fence}`);
    }
    process.stderr.write(`${_name} kill: ${JSON.stringify(outcomes)}\n${report.join("\n")}\n`);
  }, 60_000);
});
