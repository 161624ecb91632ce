// The run's dynalite: what a kill and a restart keep (a LevelDB directory) or
// lose (memory: the tables too, so `prepare` makes them again), a frozen server,
// and the removal of a run's lock items from a server it shares.
import { describe, it, expect, afterAll } from "vitest";
import { ListTablesCommand } from "@aws-sdk/client-dynamodb";
import { ProcessGroup } from "../../../cluster/processes.ts";
import { PortPlan } from "../../../cluster/ports.ts";
import { startDynalite } from "../server.ts";
import { dynamoClient, ensureLockTable, LockTable } from "../connection.ts";
import { UnknownOutcome } from "../../../clients/lock.ts";
import { removeDynamoKeys } from "../start.ts";
import { tempRunDir } from "../../../test/helpers.ts";

const dir = tempRunDir("fc-dynalite-");
const group = new ProcessGroup(dir);
afterAll(() => group.stopAll());

async function server(name: string, persistent: boolean) {
  let prepared = 0;
  const cluster = await startDynalite(group, new PortPlan(0), {
    runDir: dir,
    name,
    persistent,
    prepare: async (node) => {
      prepared++;
      const c = dynamoClient(node, 2000);
      await ensureLockTable(c).finally(() => c.destroy());
    },
  });
  const table = new LockTable(cluster.node, 500);
  const grant = (key: string) => table.update(key, { update: "SET #owner = :me ADD #fence :one", condition: "attribute_not_exists(#owner)", values: { ":me": "o", ":one": 1 } });
  return { cluster, table, grant, prepared: () => prepared };
}

describe("startDynalite", () => {
  it.each([
    [true, { ok: true, out: { lockKey: "k", owner: "o", fence: 1 } }],
    [false, { ok: true, out: null }],
  ] as const)("persistent %s: a kill and a restart on the same port keep the items, or make the table again empty", async (persistent, after) => {
    const s = await server(`dynamo-${persistent ? "disk" : "memory"}`, persistent);
    expect(await s.grant("k")).toMatchObject({ ok: true });
    await s.cluster.kill(s.cluster.node.name);
    expect(s.cluster.running(s.cluster.node.name)).toBe(false);
    // A new connection is refused: certainly not done (a kept-alive one would have been reset under its request: unknown).
    const fresh = new LockTable(s.cluster.node, 500);
    expect(await fresh.read("k")).toEqual({ ok: false, error: "conn-refused" });
    fresh.close();
    await s.cluster.restart(s.cluster.node.name);
    expect(s.prepared()).toBe(2);
    expect(await s.table.read("k")).toEqual(after);
    s.table.close();
  });

  it("a frozen server answers nothing (an unknown outcome), and everything once thawed", async () => {
    const s = await server("dynamo-frozen", false);
    expect(await s.cluster.pause(s.cluster.node.name)).toBe(true);
    const err = await s.grant("k").then(() => null, (e: unknown) => e);
    expect(err).toBeInstanceOf(UnknownOutcome);
    expect((err as UnknownOutcome).error).toBe("timeout");
    await s.cluster.resume(s.cluster.node.name);
    // The write sent while it was frozen was applied once it thawed: that is why its outcome was unknown.
    expect(await s.table.read("k")).toMatchObject({ ok: true, out: { owner: "o" } });
    s.table.close();
  });

  it("removeKeys deletes the items under the run's prefix, and only those", async () => {
    const s = await server("dynamo-shared", false);
    for (const key of ["run1:a", "run1:b", "run2:a"]) await s.grant(key);
    expect(await removeDynamoKeys([s.cluster.node], "run1:")).toBe(2);
    expect(await s.table.read("run1:a")).toEqual({ ok: true, out: null });
    expect(await s.table.read("run2:a")).toMatchObject({ ok: true, out: { owner: "o" } });
    await expect(removeDynamoKeys([s.cluster.node], "")).rejects.toThrow(/no key prefix/);
    const c = dynamoClient(s.cluster.node, 2000);
    expect((await c.send(new ListTablesCommand({}))).TableNames).toEqual(["fencecheck_locks"]);
    c.destroy();
    s.table.close();
  });
});
