// ProcessGroup with a process started withChildren (as a postmaster is): its
// children, which a signal to it does not reach, are frozen, thawed and killed
// with it. Real processes: a shell that forks two sleeps in sessions of their own.
import { afterEach, describe, expect, it } from "vitest";
import { join } from "node:path";
import { ProcessGroup, childrenOf } from "../../cluster/processes.ts";
import { sleep } from "../../lib/index.ts";
import { procState as state, tempRunDir } from "../helpers.ts";

/** The states of `pids` once every one is in `want` (a signal lands a moment after it is sent), or as they are after a second. */
async function statesSoon(pids: number[], want: (s: string | null) => boolean): Promise<Array<string | null>> {
  for (let i = 0; i < 50 && !pids.map(state).every(want); i++) await sleep(20);
  return pids.map(state);
}

async function childrenSoon(pid: number, n: number): Promise<number[]> {
  for (let i = 0; i < 100; i++) {
    const c = childrenOf(pid);
    if (c.length >= n) return c;
    await sleep(20);
  }
  throw new Error(`${pid} did not fork ${n} children`);
}

let group: ProcessGroup | null = null;
afterEach(async () => {
  await group?.stopAll();
  group = null;
});

describe("ProcessGroup withChildren", () => {
  it("pause freezes the children too, resume thaws them, kill takes them", async () => {
    const dir = tempRunDir("fc-procs-");
    group = new ProcessGroup(dir);
    // setsid: like Postgres' backends, out of the parent's process group.
    const p = await group.spawn({ name: "parent", command: "bash", args: ["-c", "setsid sleep 100 & setsid sleep 100 & wait"], logFile: join(dir, "parent.log"), withChildren: true });
    const children = await childrenSoon(p.pid, 2);
    expect(group.pause("parent")).toBe(true);
    expect(await statesSoon([p.pid, ...children], (s) => s === "T")).toEqual(["T", "T", "T"]);
    expect(group.resume("parent")).toBe(true);
    expect((await statesSoon([p.pid, ...children], (s) => s !== "T")).filter((s) => s === "T")).toEqual([]);
    await group.kill("parent");
    expect((await statesSoon(children, (s) => s === null || s === "Z")).filter((s) => s !== null && s !== "Z")).toEqual([]);
  });

  it("teardown thaws and kills a paused parent's frozen children", async () => {
    const dir = tempRunDir("fc-procs-");
    group = new ProcessGroup(dir);
    const p = await group.spawn({ name: "parent", command: "bash", args: ["-c", "setsid sleep 100 & wait"], logFile: join(dir, "parent.log"), withChildren: true });
    const [child] = await childrenSoon(p.pid, 1);
    group.pause("parent");
    expect(await statesSoon([child], (s) => s === "T")).toEqual(["T"]);
    await group.stopAll();
    group = null;
    expect([null, "Z"]).toContain((await statesSoon([child], (s) => s === null || s === "Z"))[0]);
  });
});
