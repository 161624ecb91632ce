// An acquire's ok is stamped when the lock answered, also where its fence is then
// fetched from a counter of its own (--fence-source single): the fetch belongs to
// the operation and does not move the hold's start (docs/history-format.md,
// invoke and completion). On real Redis servers: the lock on one, the fence
// counter on another, frozen with SIGSTOP for 600 ms as the lock answers.
import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { ProcessGroup } from "../../cluster/processes.ts";
import { PortPlan } from "../../cluster/ports.ts";
import { startRedisNodes } from "../../backends/redis/server.ts";
import type { ServerNode } from "../../cluster/cluster.ts";
import { RedisLock } from "../../backends/redis/client.ts";
import { CounterFenced } from "../../backends/redis/counter-fenced.ts";
import type { LockClient } from "../../clients/lock.ts";
import { LogicalClient } from "../../workloads/client.ts";
import { acquire, release } from "../../workloads/hold.ts";
import { MUTEX, type WorkloadOptions } from "../../workloads/options.ts";
import type { UnindexedEvent } from "../../store/events.ts";
import { rng } from "../../lib/index.ts";
import { tempRunDir } from "../helpers.ts";

let group: ProcessGroup;
let lockNode: ServerNode, fenceNode: ServerNode;
const opts: WorkloadOptions = {
  ttlMs: 5000, acquireTimeoutMs: 0, workMs: 0, pauseMs: 0, pauseClients: "all", writesPerHold: 1, keys: 1, rate: 1, staggerMs: 0, renew: false, pauseAt: "acquire", fenceReads: false, lock: MUTEX, cancelRate: 0,
};
const FROZEN_MS = 600;

beforeAll(async () => {
  const dir = tempRunDir();
  group = new ProcessGroup(dir);
  [lockNode, fenceNode] = await startRedisNodes(group, new PortPlan(0), 2, { runDir: dir });
});
afterAll(() => group.stopAll());

describe("an acquire whose fence comes from a counter of its own", () => {
  it("is ok when the lock answered, though its fence came 600 ms later", async () => {
    const events: UnindexedEvent[] = [];
    const clock = (): number => Number(process.hrtime.bigint());
    const c = new LogicalClient(0, 1, clock, (e) => events.push(e));
    const redis = new RedisLock({ endpoint: lockNode, ownerPrefix: "g", commandTimeoutMs: 5000, rng: rng(1) });
    let answered = 0;
    // The project's Redis lock without its fence, as a lock that issues none; the
    // counter's server frozen as its answer arrives.
    const unfenced: LockClient = {
      acquire: async (key, ttlMs, timeoutMs) => {
        const r = await redis.acquire(key, ttlMs, timeoutMs);
        answered = clock();
        group.pause(fenceNode.name);
        setTimeout(() => group.resume(fenceNode.name), FROZEN_MS);
        return r.type === "ok" ? { ...r, value: { ...r.value, fence: null } } : r;
      },
      renew: (k, h, t) => redis.renew(k, h, t),
      release: (k, h) => redis.release(k, h),
      close: () => redis.close(),
    };
    const lock = new CounterFenced(unfenced, { endpoints: [fenceNode], ownerPrefix: "g", commandTimeoutMs: 5000, rng: rng(2), options: {} }, "single");
    const held = await acquire(c, lock, "grant-time", opts);
    const returned = clock();
    expect(held?.hold.fence).toBeGreaterThan(0);
    const ok = events.find((e) => e.f === "acquire" && e.type === "ok")!;
    // The fence took the frozen server's 600 ms; the ok is stamped before them.
    expect(returned - answered).toBeGreaterThan((FROZEN_MS - 100) * 1e6);
    expect(ok.time).toBeGreaterThanOrEqual(answered - 50e6);
    expect(ok.time).toBeLessThan(answered + 100e6);
    expect(ok.time).toBeGreaterThan(events.find((e) => e.f === "acquire" && e.type === "invoke")!.time);
    await release(c, lock, held!);
    await lock.close();
  });
});
