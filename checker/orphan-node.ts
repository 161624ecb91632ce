// orphan-lock-node: an acquire failed because the node that held the lock was one
// of its own session's that its client had lost track of. In ZooKeeper's recipe a
// create whose reply is lost (ZOOKEEPER-1262) may have made its node; a client
// without protection mode cannot tell it from anyone's, sends the create again,
// and queues behind its own first node. That node holds the lock for nobody, and
// every client waits behind it until the session ends, while the history says the
// acquire that made it failed.
//
// Only the client can say this (error "orphan-node" on the failed acquire: it read
// the holding node's owner, and it was its own session, yet not this hold's node);
// a history of owners and fences alone does not name lock nodes or sessions.
import { ORPHAN_NODE_ERROR, type Witness } from "../store/events.ts";
import { quoteOp } from "./explain.ts";
import { ACQUIRE, eventsOf, type Paired } from "./paired.ts";
import { FAIL } from "./table.ts";

export const ORPHAN_NODE = ORPHAN_NODE_ERROR;

export function orphanLockNodes(m: Paired): Witness[] {
  const out: Witness[] = [];
  const { ops } = m;
  const code = m.errors.names.indexOf(ORPHAN_NODE);
  if (code < 0) return out;
  for (let i = 0; i < ops.length; i++) {
    if (ops.f[i] !== ACQUIRE || ops.outcome[i] !== FAIL || ops.error[i] !== code) continue;
    const key = m.keys.names[ops.key[i]];
    out.push({
      key,
      events: eventsOf(m, i),
      explanation:
        `On key ${JSON.stringify(key)}, ${quoteOp(m, i)}: it waited behind a lock node of its own session that was not this acquire's, ` +
        `a node its client made and lost track of (a create whose reply was lost, sent again; or a withdrawn waiter's delete that never arrived). That node held the lock for nobody, ` +
        `and holds it until the session ends: every client waits behind it, and the history says the acquire that made it failed.`,
    });
  }
  return out;
}
