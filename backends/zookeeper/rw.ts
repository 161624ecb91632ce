// ZooKeeper's shared lock (zookeeper.apache.org, Recipes, "Shared Locks"): the
// mutex recipe of backends/zookeeper/client.ts, with protection mode, session checks and
// cancellation as there, whose nodes say what they ask for. A reader creates an
// ephemeral sequential `read-` node and holds when no `write-` node has a lower
// sequence, watching the next lower `write-` node; a writer creates a `write-` node
// and holds when its node is the lowest of all, watching the next lower node of
// any kind (backends/zookeeper/queue.ts). The fence is its node's czxid, as the
// mutex's: a writer's is above every node queued before it and below every one
// after; readers that hold together have fences in the order they queued.
import type { AcquireRequest } from "../../clients/lock.ts";
import { ZkLock } from "./client.ts";
import type { NodeKind } from "./queue.ts";

export class ZkRwLock extends ZkLock {
  /** A write hold unless a read is asked for: an exclusive hold is what a request without a mode means. */
  protected override kindOf(request: AcquireRequest | undefined): NodeKind {
    return request?.mode === "read" ? "read" : "write";
  }
}
