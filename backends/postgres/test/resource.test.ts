// --resource postgres: the fencing decision is the database's. Two resource
// processes share one table and know nothing of each other's writes, yet a
// write one of them sends with a fence below what the other applied is refused,
// and under a race of both the accepted writes form one chain of fences.
import { describe, it, expect } from "vitest";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";
import { ResourceClient } from "../../../clients/resource.ts";
import { startResource, type ResourceHandle } from "../../../resource/index.ts";
import { newRunStart } from "../../../store/clock.ts";
import type { ResourceDecision } from "../../../store/events.ts";
import { shuffled, rng } from "../../../lib/index.ts";
import { pgConnection } from "../server.ts";
import { usePostgresServer } from "./server.ts";
import { tempDir } from "../../../test/helpers.ts";

const handles: ResourceHandle[] = [];
const server = usePostgresServer(() => Promise.all(handles.map((h) => h.stop())));

async function resource(fencing: boolean): Promise<{ client: ResourceClient; decisions: () => ResourceDecision[] }> {
  const dir = tempDir("fencecheck-pg-resource-");
  const logPath = join(dir, "resource.ndjson");
  const { host, port } = server.node();
  const h = await startResource({ logPath, fencing, t0: newRunStart(), logFile: join(dir, "resource.log"), store: { entry: "backends/postgres/decider", config: { host, port } } });
  handles.push(h);
  return {
    client: new ResourceClient(h.url),
    decisions: () => readFileSync(logPath, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l) as ResourceDecision),
  };
}

async function row(key: string): Promise<{ value: unknown; fence: string | null }> {
  const c = new pg.Client(pgConnection(server.node()));
  await c.connect();
  try {
    return (await c.query("SELECT value, fence FROM fencecheck_resource WHERE key = $1", [key])).rows[0];
  } finally {
    await c.end();
  }
}

describe("the resource on Postgres", () => {
  it("refuses, in the database, a stale write sent to a process that never saw the newer one", async () => {
    const a = await resource(true), b = await resource(true);
    expect(await a.client.write("p1", { owner: "h10", fence: 10, process: 0, data: "ten" })).toEqual({ type: "ok", fence: 10 });
    expect(await b.client.write("p1", { owner: "h9", fence: 9, process: 1, data: "nine" })).toMatchObject({ type: "fail", error: "stale-fence", seen: 10, got: 9 });
    expect(await row("p1")).toEqual({ value: "ten", fence: "10" });
    // b's log says what it decided and why: max_before came from the table.
    expect(b.decisions().at(-1)).toMatchObject({ op: "write", fence: 9, max_before: 10, accepted: false, fencing: true });
  });

  it("under a race of two processes, the accepted writes form one chain and the highest fence wins", async () => {
    const a = await resource(true), b = await resource(true);
    const fences = shuffled(rng(3, "race"), Array.from({ length: 40 }, (_, i) => i + 1));
    await Promise.all(fences.map((f, i) => (i % 2 ? a : b).client.write("p2", { owner: `h${f}`, fence: f, process: i % 2, data: f })));
    const all = [...a.decisions(), ...b.decisions()].filter((d) => d.key === "p2");
    expect(all).toHaveLength(40);
    const accepted = all.filter((d) => d.accepted).sort((x, y) => x.fence! - y.fence!);
    // Each accepted write's max_before is the fence of the accepted write before it, whichever process logged it.
    accepted.forEach((d, i) => expect(d.max_before).toBe(i === 0 ? null : accepted[i - 1].fence));
    for (const d of all.filter((x) => !x.accepted)) expect(d.max_before!).toBeGreaterThanOrEqual(d.fence!);
    expect(accepted.at(-1)!.fence).toBe(40);
    expect(await row("p2")).toEqual({ value: 40, fence: "40" });
  });

  it("with fencing off applies every write, and still records the highest fence as max_before", async () => {
    const a = await resource(false), b = await resource(false);
    await a.client.write("p3", { owner: "h5", fence: 5, process: 0, data: "five" });
    expect(await b.client.write("p3", { owner: "h4", fence: 4, process: 1, data: "four" })).toEqual({ type: "ok", fence: 4 });
    expect(b.decisions().at(-1)).toMatchObject({ fence: 4, max_before: 5, accepted: true, fencing: false });
    expect(await row("p3")).toEqual({ value: "four", fence: "5" });
    // A client's read is logged like any decision, with what the table held.
    expect(await a.client.read("p3", { process: 0 })).toEqual({ type: "ok", data: "four", fence: 5 });
    expect(a.decisions().at(-1)).toMatchObject({ op: "read", key: "p3", process: 0, data: "four", max_before: 5, accepted: true });
  });
});
