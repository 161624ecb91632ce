// The fenced-write workload, the experiment the product exists for (K1): each
// client acquires, maybe pauses as if in a GC, works, writes to the protected
// resource with its fence, and releases. A holder that outlived its lease still
// writes: only the resource's fence check can refuse it.
import type { Workload, ClientEnv } from "./workload.ts";
import { acquire, release, stillHeld } from "./hold.ts";
import { pauseAt, writeResource } from "./steps.ts";
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
      await pauseAt("acquire", c, o);
      await sleep(o.workMs);
      for (let i = 0; i < o.writesPerHold && stillHeld(c, held); i++) await writeResource(c, resource, held, `${held.hold.owner}#${++n}`);
      await release(c, lock, held);
    }
  },
};
