// The queue of a ZooKeeper lock node, as both recipes read it (zookeeper.apache.org,
// Recipes): the mutex's `lock-` nodes, and the shared lock's `read-` and `write-`
// nodes. Every child's name ends in the parent's sequence counter (ten digits),
// one counter for every kind, so sequences order readers and writers together.

/** What a lock node asks for: the mutex's `lock`, or the shared lock's `read` or `write`. */
export type NodeKind = "lock" | "read" | "write";

/** A child's place in the queue: its sequence number, the last ten digits of its name. */
export const seq = (name: string): number => Number(name.slice(-10));

/** Children in queue order. */
export const inQueueOrder = (children: string[]): string[] => [...children].sort((a, b) => seq(a) - seq(b));

/** A reader's node: shared with other readers. Every other kind (a writer's, a mutex's, one we do not know) excludes. */
const isRead = (name: string): boolean => name.slice(0, -10).endsWith("read-");

/**
 * The nodes `mine` waits for, lowest first (`children` in queue order): every
 * lower node, or for a reader every lower node that is not a reader's. None: it
 * holds. It watches the last of them, the next lower one it must outlast, so one
 * delete wakes one waiter (no herd).
 */
export function ahead(children: string[], mine: string): string[] {
  const lower = children.slice(0, children.indexOf(mine));
  return isRead(mine) ? lower.filter((c) => !isRead(c)) : lower;
}
