// A read-write lock in the layout of etcd's Go recipes.RWMutex
// (client/v3/experimental/recipes/rwmutex.go): under the lock's prefix, a reader
// puts `read/<lease>` and a writer `write/<lease>`, each under a lease of its own,
// and all of them queue in the order of their keys' create revisions. A reader
// holds once no WRITE key is older than its own (it waits for the youngest older
// writer to go, then looks again), so readers that arrive together hold together;
// a writer holds once no key at all is older (it waits for the key just before
// it). A writer in the queue therefore holds back the readers that came after
// it: in a FIFO of both, neither readers nor writers starve.
//
// Everything else is etcd-queue's (etcd-queue.ts): the lease kept alive while
// waiting, the check after waiting that our key still exists, cancellation, the
// `behind` fact. The fence is the hold's key's create revision: a writer's is
// above every hold granted before it, and a reader's above every writer's before
// it; readers holding together have different fences. An acquire that names no
// mode (a mutex) is a writer.
import type { AcquireRequest, ClientContext } from "../../clients/lock.ts";
import { EtcdQueueLock, type Place } from "./queue.ts";
import { RW_PREFIX } from "./places.ts";

export { RW_PREFIX };

export class EtcdRwLock extends EtcdQueueLock {
  /**
   * `writerIgnoresReaders`, kept on purpose (etcd-rw-writer-naive): a writer waits
   * for older writers only, as a reader does, the recipe copied with one prefix
   * wrong; it is granted while readers hold (rw-violation).
   */
  constructor(ctx: ClientContext, private readonly writerIgnoresReaders = false) {
    super(ctx);
  }

  protected override place(k: string, lease: string, request?: AcquireRequest): Place {
    const prefix = `${RW_PREFIX}/${k}/`;
    // Go's readers wait on `<prefix>write`, its writers on `<prefix>`: the same keys.
    if (request?.mode === "read") return { key: `${prefix}read/${lease}`, after: `${prefix}write/` };
    return { key: `${prefix}write/${lease}`, after: this.writerIgnoresReaders ? `${prefix}write/` : prefix };
  }
}
