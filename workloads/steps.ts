// What a holder does between acquire and release, shared by the workloads: the
// simulated GC pause, and its requests to the protected resource, each recorded
// as one history operation. The resource's answer decides ok or fail; a throw
// (timeout, connection lost) becomes `info` in LogicalClient.op, nowhere else.
import type { ResourceClient } from "../clients/resource.ts";
import { sleep } from "../lib/index.ts";
import type { LogicalClient } from "./client.ts";
import { holdRef, type HeldLock } from "./hold.ts";
import type { WorkloadOptions } from "./options.ts";

/** Where in a hold the --pause is taken. */
export type PausePoint = WorkloadOptions["pauseAt"];

/** The --pause of the clients it names, if taken at this point of the hold. */
export async function pauseAt(point: PausePoint, c: LogicalClient, o: WorkloadOptions): Promise<void> {
  if (o.pauseAt !== point || o.pauseMs <= 0) return;
  if (o.pauseClients === "all" || o.pauseClients.includes(c.id)) await sleep(o.pauseMs);
}

export type ReadResult = { type: "ok"; data: unknown } | { type: "refused" } | { type: "unknown" };

/**
 * Reads the key's value; `absent` stands for a key never written (the resource
 * says null), as the workload defines its starting value. With --fence-reads the
 * read carries the hold's fence, so the resource advances the key's fence to it
 * (or refuses it as stale), and the invoke records the owner and fence it was
 * sent with, as a write's does: the history alone then shows which fence a read
 * may have advanced, and a check without resource.ndjson needs that.
 */
export async function readResource(c: LogicalClient, resource: ResourceClient, held: HeldLock, o: WorkloadOptions, absent: unknown = null): Promise<ReadResult> {
  const ref = holdRef(held.hold);
  const fenced = o.fenceReads && ref.fence !== null;
  let data: unknown;
  const done = await c.op("read", held.key, fenced ? { ...ref } : {}, async () => {
    const r = await resource.read(held.key, { process: c.process, owner: ref.owner, ...(fenced ? { fence: ref.fence! } : {}) });
    if (r.type !== "ok") return { type: "fail", error: r.error, value: { ...ref, seen: r.seen } };
    data = r.data === null ? absent : r.data;
    return { type: "ok", value: { data, fence: r.fence } };
  });
  if (done.type === "ok") return { type: "ok", data };
  return done.type === "fail" ? { type: "refused" } : { type: "unknown" };
}

/** Writes `data` with the hold's fence; true when the resource applied it. */
export async function writeResource(c: LogicalClient, resource: ResourceClient, held: HeldLock, data: unknown): Promise<boolean> {
  const ref = holdRef(held.hold);
  const done = await c.op("write", held.key, { ...ref, data }, async () => {
    // A hold without a fence (Redlock) says so; whether that is good enough is the resource's call.
    const r = await resource.write(held.key, { owner: ref.owner, fence: ref.fence, process: c.process, data });
    return r.type === "ok" ? { type: "ok", value: { ...ref, data } } : { type: "fail", error: r.error, value: { ...ref, seen: r.seen } };
  });
  return done.type === "ok";
}
