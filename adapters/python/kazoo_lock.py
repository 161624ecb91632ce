"""kazoo's Lock recipe behind fencecheck's adapter protocol.

The lock as kazoo documents it: zk.Lock(path, identifier).acquire(blocking,
timeout) creates an ephemeral sequential node "<uuid>__lock__<seq>" under
/fencecheck/locks/<key> (the project's ZooKeeper lock root) and waits until it is
the lowest; release() deletes it. A hold lasts as long as the ZooKeeper session,
so there is no lease to renew (renew "none").

Session timeout = the init's ttl_ms (ZooKeeper clamps it to its min and max):
the session is the hold's lease, so a holder frozen longer than the TTL loses its
lock as a lease-based holder would, which is also what fencecheck's own
zookeeper client does.

Release: kazoo's release() swallows NoNodeError and returns True, so a hold
whose session ended (the listener said LOST) is answered "released": false,
"lost": "session-expired", even when LOST came while the delete was waiting.

Fence: the czxid of the hold's lock node (read with exists() right after
acquiring): zxids only grow and no two nodes share one. A connection lost under
that read is waited out (read again until the command timeout): kazoo granted
the lock, and a granted node this program answered "error" for would stay in
its session, holding the lock for nobody. If the read still fails, the node is
deleted (as long again) before the "error" answer.

Connection states, as kazoo's docs recommend, from zk.add_listener:
SUSPENDED -> notice suspended; LOST (the session expired, its ephemeral nodes
are gone) -> a lost notice for every hold of this program; CONNECTED after
SUSPENDED or LOST -> notice reconnected.

Lock kinds, as kazoo documents them, all under the same path: zk.ReadLock and
zk.WriteLock (mode "read"/"write": "__rlock__" and "__lock__" nodes, readers
share, a writer excludes both); zk.Semaphore(path, identifier, max_leases=permits)
(a lease is an ephemeral node "<path>/<uuid>", taken under kazoo's inner lock
"<path>-__lock__"; the path's data stores max_leases, and a semaphore asked with
another count raises ValueError: error). kazoo's locks are not reentrant (its
docs say so), so no re-entry is offered.

Fences: a read or write hold's fence is its node's czxid, as the mutex's. A
semaphore lease's fence is its lease node's czxid: unique and rising with each
grant, so it orders the grants, though up to `permits` leases hold at once and a
later lease's fence says nothing of the earlier ones being gone.

Cancel: the recipe's own cancel() (Lock.cancel, Semaphore.cancel) makes the
blocked acquire raise CancelledError, after kazoo's best-effort cleanup of its
node; the node is then looked for: gone -> fail "cancelled" (naming the owner),
still there or unreadable -> error "cancel-unknown". A Semaphore looks at its
cancel flag only while it holds its inner lock, so a waiter queued behind that
lock is withdrawn once it gets there (or its wait ends "timeout" first).

A failed acquire is looked at before it is called a fail: kazoo deletes its
contender node on the way out, but swallows an error doing so (kazoo PR #760).
If a node of this acquire is still queued, the acquire is answered "error" (it
may yet be granted the lock, for nobody). If the lock is held by a node of our
own session that is none of our holds, the fail says "orphan-node".
"""

import os
import threading
import time

from fencecheck_adapter import Adapter, cancelled, notice, run

from kazoo.client import KazooClient, KazooState
from kazoo.exceptions import CancelledError, ConnectionLoss, KazooException, LockTimeout, NoNodeError, SessionExpiredError
from kazoo.recipe.lock import Semaphore
from kazoo.version import __version__ as KAZOO_VERSION

LOCK_ROOT = "/fencecheck/locks"
# kazoo's Semaphore resets its cancel flag as its acquire starts: a cancel that
# came just then is given again this much later.
RECANCEL_S = 0.05


def _seq(name):
    return name[-10:]


def _node_of(recipe):
    """The name of a hold's node under its path: a lock's node, a semaphore's lease."""
    if isinstance(recipe, Semaphore):
        return recipe.create_path.rsplit("/", 1)[1]
    return recipe.node


class KazooLockAdapter(Adapter):
    fences = True
    renew_mode = "none"
    library = "kazoo %s" % KAZOO_VERSION
    kinds = {"rw": True, "semaphore": True, "cancel": True}

    def init(self, req):
        self.hosts = ",".join("%s:%d" % (e["host"], e["port"]) for e in req["endpoints"])
        self.session_s = max(req["ttl_ms"], 1) / 1000.0
        self.call_s = req.get("command_timeout_ms", 3000) / 1000.0
        self.prefix = req["owner_prefix"]
        self.count = 0
        self.zk = None
        self.mu = threading.Lock()  # guards holds, lost and suspended against the listener
        self.holds = {}  # owner -> (key, Lock)
        self.lost = {}  # owner -> why, for holds the listener reported lost
        self.suspended = False
        self.closing = False
        self.waiting = None  # the recipe the main thread's acquire is blocked in, for cancel
        # Connect in the background from now on, as an application connects at its
        # start: the first acquire then asks ZooKeeper at once instead of paying for
        # the handshake while its wait is timed. init itself must not block on it
        # (the set-up check sends endpoints where nothing listens).
        self.zk = KazooClient(hosts=self.hosts, timeout=self.session_s,
                              # Reconnect promptly after a fault instead of backing off to an hour.
                              connection_retry={"max_tries": -1, "delay": 0.1, "backoff": 2, "max_delay": 1})
        self.zk.add_listener(self._listener)
        self.started = self.zk.start_async()

    # -- connection ---------------------------------------------------------

    def _listener(self, state):
        # Runs on kazoo's connection thread: no blocking calls here.
        if self.closing:
            return
        if state == KazooState.SUSPENDED:
            with self.mu:
                self.suspended = True
            notice({"type": "suspended"})
        elif state == KazooState.LOST:
            with self.mu:
                self.suspended = True
                gone = list(self.holds.items())
                self.holds.clear()
                for owner, _ in gone:
                    self.lost[owner] = "session-expired"
            for owner, (key, _) in gone:
                notice({"type": "lost", "key": key, "owner": owner})
        elif state == KazooState.CONNECTED:
            with self.mu:
                was, self.suspended = self.suspended, False
            if was:
                notice({"type": "reconnected"})

    def _client(self):
        """The client once its first session is up, or None if it is not up within
        the command timeout (it keeps trying in the background)."""
        if self.started is not None:
            if not self.started.wait(self.call_s):
                return None
            self.started = None
        return self.zk

    def _call(self, async_result, timeout=None):
        # Our own reads get the command timeout; kazoo's sync calls would queue
        # while disconnected and wait for the connection to come back.
        return async_result.get(timeout=self.call_s if timeout is None else timeout)

    def _through_loss(self, send):
        """send() (a call) sent again each time the connection is lost, until the
        command timeout: kazoo reconnects within the session, and its requests
        fail at once while it does."""
        deadline = time.monotonic() + self.call_s
        while True:
            try:
                return self._call(send(), max(0.05, deadline - time.monotonic()))
            except ConnectionLoss:
                if time.monotonic() >= deadline:
                    raise
                time.sleep(0.05)

    def _let_go(self, zk, node_path):
        """Delete a granted node this program cannot answer for, rather than leave it
        holding the lock for nobody; what became of it, for the error's detail."""
        try:
            self._through_loss(lambda: zk.delete_async(node_path))
            return "its node deleted"
        except NoNodeError:
            return "its node already gone"
        except Exception as exc:  # noqa: BLE001 - the error answer says it may be there
            return "its node may be left (%s)" % type(exc).__name__

    # -- requests -----------------------------------------------------------

    def acquire(self, req):
        return self._acquire(req, lambda zk, path, owner: zk.Lock(path, identifier=owner))

    def acquire_rw(self, req, mode):
        if mode not in ("read", "write"):
            return {"type": "error", "error": "unknown mode %r" % (mode,)}
        return self._acquire(req, lambda zk, path, owner: (zk.ReadLock if mode == "read" else zk.WriteLock)(path, identifier=owner))

    def acquire_semaphore(self, req, permits):
        return self._acquire(req, lambda zk, path, owner: zk.Semaphore(path, identifier=owner, max_leases=int(permits)))

    def cancel(self, acquire_req):
        with self.mu:
            recipe = self.waiting
        if recipe is not None:
            recipe.cancel()
            if isinstance(recipe, Semaphore):
                threading.Timer(RECANCEL_S, self._recancel, (recipe,)).start()
        # No recipe yet: the acquire sees cancelled(req) before it sends anything.
        return {"type": "ok"}

    def _recancel(self, recipe):
        with self.mu:
            if self.waiting is recipe:
                recipe.cancel()

    def _acquire(self, req, make):
        zk = self._client()
        if zk is None:
            return {"type": "fail", "error": "conn-refused", "detail": "no ZooKeeper connection within the command timeout"}
        self.count += 1
        owner = "%s-h%d" % (self.prefix, self.count)
        key = req["key"]
        path = "%s/%s" % (LOCK_ROOT, key)
        wait_s = req["wait_ms"] / 1000.0
        blocking = wait_s > 0
        recipe = make(zk, path, owner)
        with self.mu:
            self.waiting = recipe
            withdrawn = cancelled(req)
        try:
            if withdrawn:
                # Cancelled before the recipe sent anything: nothing was queued.
                return {"type": "fail", "error": "cancelled", "owner": owner}
            try:
                got = recipe.acquire(blocking=blocking, timeout=wait_s if blocking else None)
            except LockTimeout:
                got = False
            except CancelledError:
                return self._withdrawn(zk, path, recipe, owner)
        finally:
            with self.mu:
                self.waiting = None
        if not got:
            if isinstance(recipe, Semaphore):
                return self._lease_not_had(zk, recipe, blocking)
            return self._why_not(zk, path, recipe, blocking)
        node = _node_of(recipe)
        node_path = "%s/%s" % (path, node)
        try:
            stat = self._through_loss(lambda: zk.exists_async(node_path))
        except SessionExpiredError:
            stat = None
        except Exception as exc:  # noqa: BLE001 - granted, but its node cannot be read
            return {"type": "error", "error": "granted, node unreadable: %s" % type(exc).__name__, "node": node,
                    "detail": self._let_go(zk, node_path)}
        with self.mu:
            # The hold is real only if its node lives in the session we have now: a
            # session that ended after the create took the node with it, and one that
            # ends after this check finds the hold registered and reports it lost.
            live = stat is not None and zk.client_id is not None and stat.ephemeralOwner == zk.client_id[0]
            if live:
                self.holds[owner] = (key, recipe)
        if not live:
            return {"type": "error", "error": "session changed while acquiring", "node": node,
                    "detail": self._let_go(zk, node_path)}
        return {"type": "ok", "owner": owner, "fence": stat.czxid, "fence_source": "czxid",
                "node": node, "session": "%x" % stat.ephemeralOwner}

    def _withdrawn(self, zk, path, recipe, owner):
        """The answer for an acquire its cancel withdrew (kazoo's cleanup already ran):
        cancelled only when its node is certainly gone."""
        try:
            if isinstance(recipe, Semaphore):
                left = self._call(zk.exists_async(recipe.create_path)) is not None
            else:
                left = any(c.startswith(recipe.prefix) for c in self._call(zk.get_children_async(path)))
        except SessionExpiredError:
            # The session took every ephemeral node it made.
            return {"type": "fail", "error": "cancelled", "owner": owner}
        except Exception as exc:  # noqa: BLE001 - cannot know whether the node is gone
            return {"type": "error", "error": "cancel-unknown", "detail": "node unreadable: %s" % type(exc).__name__}
        if left:
            return {"type": "error", "error": "cancel-unknown", "detail": "its node is still there"}
        return {"type": "fail", "error": "cancelled", "owner": owner}

    def _lease_not_had(self, zk, semaphore, blocking):
        """A semaphore acquire that kazoo says failed: certain once its lease node is gone."""
        try:
            left = self._call(zk.exists_async(semaphore.create_path)) is not None
        except SessionExpiredError:
            return {"type": "fail", "error": "session-expired"}
        except Exception as exc:  # noqa: BLE001
            return {"type": "error", "error": "acquire failed; lease node unreadable: %s" % type(exc).__name__}
        if left:
            return {"type": "error", "error": "lease node left behind", "node": _node_of(semaphore)}
        return {"type": "fail", "error": "timeout" if blocking else "busy"}

    def _why_not(self, zk, path, lock, blocking):
        """The answer for an acquire that kazoo says failed (its cleanup already ran)."""
        try:
            children = self._call(zk.get_children_async(path))
        except SessionExpiredError:
            # Our session is gone, and with it every ephemeral node it made: certainly not held.
            return {"type": "fail", "error": "session-expired"}
        except Exception as exc:  # noqa: BLE001 - any other failure leaves the question open
            return {"type": "error", "error": "acquire failed; contenders unreadable: %s" % type(exc).__name__}
        mine = [c for c in children if c.startswith(lock.prefix)]
        if mine:
            # kazoo's _best_effort_cleanup swallowed a failed delete: this
            # acquire's node is still queued and may be granted the lock.
            return {"type": "error", "error": "contender node left behind", "node": mine[0]}
        contenders = sorted((c for c in children if lock._contenders_re.search(c)), key=_seq)
        error = "timeout" if blocking else "busy"
        if contenders:
            with self.mu:
                ours = {_node_of(h) for _, h in self.holds.values()}
            head = contenders[0]
            try:
                stat = self._call(zk.exists_async("%s/%s" % (path, head)))
            except Exception:  # noqa: BLE001 - the fail itself is certain either way
                stat = None
            session = zk.client_id[0] if zk.client_id else None
            if stat is not None and stat.ephemeralOwner == session and head not in ours:
                return {"type": "fail", "error": "orphan-node", "node": head}
        return {"type": "fail", "error": error}

    def release(self, req):
        owner = req["owner"]
        with self.mu:
            why = self.lost.pop(owner, None)
            entry = self.holds.get(owner)  # stays listed: a LOST meanwhile must still name it
        if why:
            return {"type": "ok", "released": False, "lost": why}
        if entry is None:
            return {"type": "fail", "error": "not-owner", "detail": "no such hold in this program"}
        _, lock = entry
        node = _node_of(lock)
        try:
            deleted = lock.release()
        except SessionExpiredError:
            with self.mu:
                self.holds.pop(owner, None)
                self.lost.pop(owner, None)
            # The session's ephemeral nodes, this hold's included, are gone.
            return {"type": "ok", "released": False, "lost": "session-expired"}
        with self.mu:
            self.holds.pop(owner, None)
            why = self.lost.pop(owner, None)
        if why:
            # The session ended while the delete waited: kazoo then deletes in the new
            # session, finds no node, and says True (it swallows NoNodeError). The node
            # went with the session, not with our delete.
            return {"type": "ok", "released": False, "lost": why}
        if not deleted:
            # kazoo's lock did not think itself acquired, so it sent nothing.
            return {"type": "error", "error": "kazoo's release did nothing (lock not acquired)", "node": node}
        # True also when the delete found no node: kazoo swallows NoNodeError.
        return {"type": "ok", "released": True, "node": node}

    def close(self):
        self.closing = True
        if self.zk is not None:
            try:
                self.zk.stop()
                self.zk.close()
            except KazooException:
                pass


if __name__ == "__main__":
    run(KazooLockAdapter())
