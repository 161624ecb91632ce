// The fenced-write workload, the experiment the product exists for (K1): each
// client acquires, maybe pauses as if in a GC, works, writes to the protected
// resource with its fence, and releases. A holder that outlived its lease still
// writes: only the resource's fence check can refuse it.
import type { Workload, ClientEnv } from "./workload.ts";
import { acquire, release, stillHeld, holdRef } from "./hold.ts";
import { sleep } from "../lib/index.ts";

export const fencedWrite: Workload = {
  name: "fenced-write",
  describe: "acquire, (pause), work, write to the resource with the fence, release",
  async run(env: ClientEnv): Promise<void> {
    const { client: c, lock, resource, opts: o } = env;
    let n = 0;
    while (await env.nextArrival()) {
      const key = env.pickKey();
      const held = await acquire(c, lock, key, o);
      if (!held) continue;
      if (o.pauseMs > 0 && (o.pauseClients === "all" || o.pauseClients.includes(c.id))) await sleep(o.pauseMs);
      await sleep(o.workMs);
      for (let i = 0; i < o.writesPerHold && stillHeld(c, held); i++) {
        const data = `${held.hold.owner}#${++n}`;
        const ref = holdRef(held.hold);
        await c.op("write", key, { ...ref, data }, async () => {
          // Redis always issues a fence; a client without one cannot use a fencing resource.
          const r = await resource.write(key, { owner: ref.owner, fence: ref.fence ?? 0, process: c.process, data });
          return r.type === "ok" ? { type: "ok", value: { ...ref, data } } : { type: "fail", error: "stale-fence", value: { ...ref, seen: r.seen } };
        });
      }
      await release(c, lock, held);
    }
  },
};
