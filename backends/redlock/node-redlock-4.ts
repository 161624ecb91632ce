// The npm package `redlock` 4.2.0 (npm's `latest`), installed beside 5 as
// `redlock4`: the callback era's `lock`/`unlock`/`extend`. Unlike 5 it waits for
// every node (each bounded by the command timeout) and refuses a quorum that came
// back after the lease's validity. A failed `extend` unlocks the lock on every
// node: the hold is given up, not just left to expire. Its own retries are off;
// this client retries within --acquire-timeout, as node-redlock does.
import Redlock4 from "redlock4";
import { NpmRedlock } from "./npm-redlock.ts";
import type { RedlockClientOptions } from "../redis/nodes.ts";

export class NodeRedlock4 extends NpmRedlock<Redlock4.Lock> {
  constructor(opts: RedlockClientOptions) {
    super(opts, (clients) => {
      const redlock = new Redlock4(clients, { retryCount: 0, driftFactor: 0.01 });
      // Its per-node errors, which it tolerates by design; the record has them.
      redlock.on("clientError", () => {});
      const s = redlock.scripts;
      return {
        name: "redlock 4",
        scripts: { grant: s.lockScript.value, extend: s.extendScript.value, release: s.unlockScript.value },
        lock: (key, ttlMs) => redlock.lock(key, ttlMs),
        extend: (lock, ttlMs) => redlock.extend(lock, ttlMs),
        unlock: (lock) => redlock.unlock(lock),
        isLockError: (e) => e instanceof Redlock4.LockError,
      };
    });
  }
}
