// A lock holder in a process of its own, for an experiment that SIGKILLs it for
// real (ttl-liveness): nothing it would do on its way out (a release, a last
// renew) can run, so its hold ends only when the lease runs out on the servers.
//
// Arguments: client name, endpoints as JSON, key, TTL in ms, and the experiment's
// directory (unused here; in the command line so that the experiment's processes
// can be found by it). It acquires the key once and renews it every third of the
// lease, as a watchdog does, so that while it lives the hold does not lapse by
// itself: only the kill ends it. It tells its parent over IPC (HolderMessage),
// with times as epoch ms to the microsecond, comparable across processes on this
// machine.
import { createClient } from "../backends/index.ts";
import { rng } from "../lib/index.ts";
import type { Hold } from "../clients/index.ts";

export type HolderMessage =
  | { type: "held"; hold: Hold; began_at: number; at: number }
  | { type: "failed"; outcome: unknown; at: number }
  | { type: "renewed"; ok: boolean; at: number };

const now = (): number => performance.timeOrigin + performance.now();
const tell = (m: HolderMessage): void => void process.send?.(m);
// No orphan: the IPC channel closes however the parent goes.
process.on("disconnect", () => process.exit(0));

const [name, endpoints, key, ttlArg] = process.argv.slice(2);
const ttlMs = Number(ttlArg);
const lock = await createClient(name, { endpoints: JSON.parse(endpoints), ownerPrefix: `holder${process.pid}`, commandTimeoutMs: 2000, rng: rng(1, "holder", process.pid), options: {} });

const began = now();
const r = await lock.acquire(key, ttlMs, 0).catch((err: unknown) => ({ type: "threw", error: String(err) }) as const);
if (r.type !== "ok") {
  tell({ type: "failed", outcome: r, at: now() });
} else {
  const hold = r.value;
  tell({ type: "held", hold, began_at: began, at: now() });
  // Every third of the lease the client really took (etcd: whole seconds), not of the one asked for.
  setInterval(() => {
    lock.renew(key, hold, ttlMs).then(
      (o) => tell({ type: "renewed", ok: o.type === "ok", at: now() }),
      () => tell({ type: "renewed", ok: false, at: now() }),
    );
  }, hold.ttlMs / 3);
}
