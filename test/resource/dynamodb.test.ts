// --resource dynamodb: the fencing decision is DynamoDB's (a conditional
// UpdateItem), and resource.ndjson says only what the store did: a write killed
// with dynalite mid-request is logged `accepted: null`, every line has the place
// the store gave it, and after the store comes back the table agrees with the log.
import { describe, it, expect, afterAll } from "vitest";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ScanCommand } from "@aws-sdk/client-dynamodb";
import { ResourceClient } from "../../clients/resource.ts";
import { dynamoClient } from "../../clients/dynamodb-connection.ts";
import { startDynalite, type DynaliteCluster } from "../../cluster/dynamodb.ts";
import { ProcessGroup } from "../../cluster/processes.ts";
import { PortPlan } from "../../cluster/ports.ts";
import { startResource, type ResourceHandle } from "../../resource/index.ts";
import { newRunStart } from "../../store/clock.ts";
import type { ResourceDecision } from "../../store/events.ts";
import { decisionProblem } from "../../store/reader.ts";
import { sleep } from "../../lib/time.ts";

const handles: ResourceHandle[] = [];
const groups: ProcessGroup[] = [];
afterAll(async () => {
  await Promise.all(handles.map((h) => h.stop()));
  await Promise.all(groups.map((g) => g.stopAll()));
});

/** The resource's own dynalite, as a run starts it (its LevelDB in the run directory), in a directory of the test's. */
async function resourceDb(): Promise<{ dir: string; db: DynaliteCluster }> {
  const dir = mkdtempSync(join(tmpdir(), "fencecheck-dynamo-resource-"));
  const group = new ProcessGroup(dir);
  groups.push(group);
  return { dir, db: await startDynalite(group, new PortPlan(0), { runDir: dir, name: "resource-db", persistent: true }) };
}

async function resource(fencing: boolean, port: number, dir: string): Promise<{ client: ResourceClient; decisions: () => ResourceDecision[] }> {
  const logPath = join(dir, `resource-${handles.length}.ndjson`);
  const h = await startResource({ logPath, fencing, t0: newRunStart(), logFile: join(dir, `resource-${handles.length}.log`), dynamo: { host: "127.0.0.1", port } });
  handles.push(h);
  return {
    client: new ResourceClient(h.url),
    decisions: () => readFileSync(logPath, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l) as ResourceDecision),
  };
}

async function table(port: number): Promise<Map<string, { value: unknown; fence: number | null; decisions: number }>> {
  const items = (await dynamoClient({ host: "127.0.0.1", port }, 5000).send(new ScanCommand({ TableName: "fencecheck_resource", ConsistentRead: true }))).Items ?? [];
  return new Map(items.map((i) => [i.key.S!, { value: i.value?.S === undefined ? null : JSON.parse(i.value.S), fence: i.fence ? Number(i.fence.N) : null, decisions: Number(i.decisions.N) }]));
}

describe("the resource on DynamoDB", () => {
  it("refuses, in the table, a stale write sent to a process that never saw the newer one; each line has its place", async () => {
    const { dir, db } = await resourceDb();
    const port = db.node.port;
    const a = await resource(true, port, dir), b = await resource(true, port, dir);
    expect(await a.client.write("d1", { owner: "h10", fence: 10, process: 0, data: "ten" })).toEqual({ type: "ok", fence: 10 });
    expect(await b.client.write("d1", { owner: "h9", fence: 9, process: 1, data: "nine" })).toMatchObject({ type: "fail", error: "stale-fence", seen: 10, got: 9 });
    expect(await a.client.read("d1", { owner: "h10", fence: 10, process: 0 })).toMatchObject({ type: "ok", data: "ten" });
    expect(a.decisions()).toMatchObject([
      { op: "write", fence: 10, max_before: null, accepted: true, order: 1 },
      { op: "read", accepted: true, data: "ten", order: 3 },
    ]);
    expect(b.decisions()).toMatchObject([{ op: "write", fence: 9, max_before: 10, accepted: false, order: 2 }]);
    expect((await table(port)).get("d1")).toEqual({ value: "ten", fence: 10, decisions: 3 });
  });

  it("a kill of dynalite during writes: lines of unknown outcome say null, and the log and the table agree", async () => {
    const { dir, db } = await resourceDb();
    const port = db.node.port;
    const r = await resource(true, port, dir);
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
    await db.kill("resource-db");
    await sleep(300);
    await db.restart("resource-db");
    await sleep(800);
    running = false;
    await Promise.all(writers);
    const lines = r.decisions();
    for (const l of lines) expect(decisionProblem(l)).toBeNull();
    // Writes were decided before the kill and after the restart.
    expect(before).toBeGreaterThan(10);
    expect(lines.length).toBeGreaterThan(before + 10);
    expect(outcomes.ok).toBeGreaterThan(0);
    expect(outcomes.refused).toBeGreaterThan(0);

    const state = await table(port);
    const report: string[] = [];
    for (const key of keys) {
      const mine = lines.filter((l) => l.key === key);
      const known = mine.filter((l) => l.order !== null);
      const unknown = mine.filter((l) => l.accepted === null);
      // null only for an outcome unknown, and then without a place.
      expect(mine.filter((l) => l.order === null)).toEqual(unknown);
      const places = known.map((l) => l.order!);
      expect(new Set(places).size).toBe(places.length);
      const row = state.get(key)!;
      // Every decision the store counted is a line with its place, or one of unknown outcome that took effect.
      expect(Math.max(...places)).toBeLessThanOrEqual(row.decisions);
      expect(row.decisions - known.length).toBeGreaterThanOrEqual(0);
      expect(row.decisions - known.length).toBeLessThanOrEqual(unknown.length);
      // The value in the table is the last accepted write's, or one of unknown outcome's that came after it.
      const last = known.filter((l) => l.accepted === true).sort((x, y) => x.order! - y.order!).at(-1)!;
      const maybe = [last, ...unknown.filter(() => row.decisions > last.order!)];
      expect(maybe.map((l) => l.data)).toContain(row.value);
      expect(maybe.map((l) => l.fence)).toContain(row.fence);
      // Fencing on: the accepted writes, in the store's order, have rising fences.
      const chain = known.filter((l) => l.accepted === true).sort((x, y) => x.order! - y.order!).map((l) => l.fence!);
      expect(chain).toEqual([...chain].sort((x, y) => x - y));
      report.push(`${key}: ${mine.length} lines (${unknown.length} of unknown outcome), table decisions=${row.decisions} value=${row.value} fence=${row.fence}`);
    }
    process.stderr.write(`dynamodb kill: ${JSON.stringify(outcomes)}\n${report.join("\n")}\n`);
  }, 60_000);
});
