// The counter workload (C1 of the catalogue): each client acquires, reads the
// key's value, works, writes the value read plus one with its fence, and releases.
// Fencing only the writes lets a holder whose lease expired between its read and
// its write still write, if the next holder has read but not yet written: both
// write the same number and an increment is lost. With --fence-reads the next
// holder's read advances the resource's fence, and the stale write is refused.
import type { Workload, ClientEnv } from "./workload.ts";
import { acquire, release, stillHeld } from "./hold.ts";
import { pauseAt, readResource, writeResource } from "./steps.ts";
import { sleep } from "../lib/index.ts";

export const counter: Workload = {
  name: "counter",
  describe: "acquire, (pause), read the counter, (pause), work, write it plus one with the fence, release",
  reads: true,
  async run(env: ClientEnv): Promise<void> {
    const { client: c, lock, resource, opts: o } = env;
    while (await env.nextArrival()) {
      const key = env.pickKey();
      const held = await acquire(c, lock, key, o);
      if (!held) continue;
      await pauseAt("acquire", c, o);
      // A key never written holds 0 (docs/history-format.md), so the first
      // increment writes 1.
      const read = stillHeld(c, held) ? await readResource(c, resource, held, o, 0) : null;
      // A refused read (a newer hold has read or written) abandons the hold: its
      // value is gone and no write of it could be accepted.
      if (read?.type === "ok" && typeof read.data === "number") {
        await pauseAt("read", c, o);
        await sleep(o.workMs);
        if (stillHeld(c, held)) await writeResource(c, resource, held, read.data + 1);
      }
      await release(c, lock, held);
    }
  },
};
