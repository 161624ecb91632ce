// The fenced-write workload, the experiment the product exists for (K1): each
// client acquires, maybe pauses as if in a GC, works, writes to the protected
// resource with its fence, and releases. A holder that outlived its lease still
// writes: only the resource's fence check can refuse it. The other lock kinds
// (--lock) shape the hold as their users do (holds.ts).
import type { Workload, ClientEnv } from "./workload.ts";
import { HOLDS } from "./holds.ts";

export const fencedWrite: Workload = {
  name: "fenced-write",
  describe: "acquire, (pause), work, write to the resource with the fence, release; readers of an rw lock read with theirs",
  async run(env: ClientEnv): Promise<void> {
    const hold = HOLDS[env.opts.lock.kind];
    let n = 0;
    while (await env.nextArrival()) n = await hold(env, env.pickKey(), n);
  },
};
