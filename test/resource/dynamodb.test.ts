// --resource dynamodb: the fencing decision is DynamoDB's (a conditional
// UpdateItem), and resource.ndjson says only what the store did: a write killed
// with dynalite mid-request is logged `accepted: null`, every line has the place
// the store gave it, and after the store comes back the table agrees with the log.
import { describe, it, expect, afterAll } from "vitest";
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DynamoDBClient, ListTablesCommand, ScanCommand } from "@aws-sdk/client-dynamodb";
import { ResourceClient } from "../../clients/resource.ts";
import { startResource, type ResourceHandle } from "../../resource/index.ts";
import { newRunStart } from "../../store/clock.ts";
import type { ResourceDecision } from "../../store/events.ts";
import { decisionProblem } from "../../store/reader.ts";
import { sleep } from "../../lib/time.ts";

const handles: ResourceHandle[] = [];
const stores: ChildProcess[] = [];
afterAll(async () => {
  await Promise.all(handles.map((h) => h.stop()));
  for (const s of stores) s.kill("SIGKILL");
});

const freePort = (): Promise<number> =>
  new Promise((resolve) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });

const db = (port: number): DynamoDBClient =>
  new DynamoDBClient({ endpoint: `http://127.0.0.1:${port}`, region: "us-east-1", credentials: { accessKeyId: "x", secretAccessKey: "x" }, maxAttempts: 1 });

/** A dynalite of the test's own on `port`, its LevelDB in `path`; resolves once it answers ListTables. */
async function dynalite(port: number, path: string): Promise<ChildProcess> {
  const cli = createRequire(import.meta.url).resolve("dynalite/cli.js");
  const p = spawn(process.execPath, [cli, "--port", String(port), "--host", "127.0.0.1", "--path", path, "--createTableMs", "0"], { stdio: "ignore" });
  stores.push(p);
  const c = db(port);
  for (let i = 0; i < 100; i++) {
    try {
      await c.send(new ListTablesCommand({}));
      c.destroy();
      return p;
    } catch {
      await sleep(50);
    }
  }
  throw new Error("dynalite did not answer");
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
  const items = (await db(port).send(new ScanCommand({ TableName: "fencecheck_resource", ConsistentRead: true }))).Items ?? [];
  return new Map(items.map((i) => [i.key.S!, { value: i.value?.S === undefined ? null : JSON.parse(i.value.S), fence: i.fence ? Number(i.fence.N) : null, decisions: Number(i.decisions.N) }]));
}

describe("the resource on DynamoDB", () => {
  it("refuses, in the table, a stale write sent to a process that never saw the newer one; each line has its place", async () => {
    const dir = mkdtempSync(join(tmpdir(), "fencecheck-dynamo-resource-"));
    const port = await freePort();
    await dynalite(port, join(dir, "db"));
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
    const dir = mkdtempSync(join(tmpdir(), "fencecheck-dynamo-kill-"));
    const port = await freePort();
    let store = await dynalite(port, join(dir, "db"));
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
    store.kill("SIGKILL");
    await new Promise((res) => store.once("exit", res));
    await sleep(300);
    store = await dynalite(port, join(dir, "db"));
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
