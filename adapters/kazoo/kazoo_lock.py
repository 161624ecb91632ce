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
acquiring): zxids only grow and no two nodes share one.

Connection states, as kazoo's docs recommend, from zk.add_listener:
SUSPENDED -> notice suspended; LOST (the session expired, its ephemeral nodes
are gone) -> a lost notice for every hold of this program; CONNECTED after
SUSPENDED or LOST -> notice reconnected.

A failed acquire is looked at before it is called a fail: kazoo deletes its
contender node on the way out, but swallows an error doing so (kazoo PR #760).
If a node of this acquire is still queued, the acquire is answered "error" (it
may yet be granted the lock, for nobody). If the lock is held by a node of our
own session that is none of our holds, the fail says "orphan-node".
"""

import os
import sys
import threading

# No __pycache__ beside the shared module: the adapters live in a checkout.
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

from fencecheck_adapter import Adapter, find_debian_packages, notice, run  # noqa: E402

find_debian_packages("kazoo")

from kazoo.client import KazooClient, KazooState  # noqa: E402
from kazoo.exceptions import KazooException, LockTimeout, SessionExpiredError  # noqa: E402
from kazoo.version import __version__ as KAZOO_VERSION  # noqa: E402

LOCK_ROOT = "/fencecheck/locks"


def _seq(name):
    return name[-10:]


class KazooLockAdapter(Adapter):
    fences = True
    renew_mode = "none"
    library = "kazoo %s" % KAZOO_VERSION

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

    def _call(self, async_result):
        # Our own reads get the command timeout; kazoo's sync calls would queue
        # while disconnected and wait for the connection to come back.
        return async_result.get(timeout=self.call_s)

    # -- requests -----------------------------------------------------------

    def acquire(self, req):
        zk = self._client()
        if zk is None:
            return {"type": "fail", "error": "conn-refused", "detail": "no ZooKeeper connection within the command timeout"}
        self.count += 1
        owner = "%s-h%d" % (self.prefix, self.count)
        key = req["key"]
        path = "%s/%s" % (LOCK_ROOT, key)
        wait_s = req["wait_ms"] / 1000.0
        blocking = wait_s > 0
        lock = zk.Lock(path, identifier=owner)
        try:
            got = lock.acquire(blocking=blocking, timeout=wait_s if blocking else None)
        except LockTimeout:
            got = False
        if not got:
            return self._why_not(zk, path, lock, blocking)
        node = "%s/%s" % (path, lock.node)
        stat = self._call(zk.exists_async(node))
        with self.mu:
            # The hold is real only if its node lives in the session we have now: a
            # session that ended after the create took the node with it, and one that
            # ends after this check finds the hold registered and reports it lost.
            live = stat is not None and zk.client_id is not None and stat.ephemeralOwner == zk.client_id[0]
            if live:
                self.holds[owner] = (key, lock)
        if not live:
            # Do not leave a node that would hold the lock for nobody.
            try:
                lock.release()
            except KazooException:
                pass
            return {"type": "error", "error": "session changed while acquiring", "node": lock.node}
        return {"type": "ok", "owner": owner, "fence": stat.czxid, "fence_source": "czxid",
                "node": lock.node, "session": "%x" % stat.ephemeralOwner}

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
                ours = {h.node for _, h in self.holds.values()}
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
        node = lock.node
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
