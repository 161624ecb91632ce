"""python-etcd3's Lock behind fencecheck's adapter protocol.

The lock as python-etcd3 documents it: client.lock(name, ttl=ttl_s), then
acquire(timeout=wait_s), refresh() to renew, release(). Under the hood: a lease
of ttl seconds, a transaction "create_revision(/locks/<name>) == 0 -> put
/locks/<name> = <uuid> with the lease", retried on every watch event on the key
until the timeout; refresh() is one lease keep-alive; release() deletes the key
if its value is still this lock's uuid (the lease is left to expire).

Names: the lock name is "fencecheck/python-etcd3/<key>", so the etcd key is
"/locks/fencecheck/python-etcd3/<key>" (the library puts its own "/locks/" in
front).

TTL: a lease is whole seconds, so ttl_ms is rounded up (1000 -> 1 s, 1500 -> 2
s), and etcd may grant more than asked (its minimum lease TTL); the ok reply
says both ("lease_requested_s", "lease_s": what etcd granted).

Fence: after acquiring, a (linearizable) get of the lock's key: its
create_revision, if the value is still this lock's uuid. Revisions only grow,
and each grant creates the key anew, so each grant has a larger one.

Endpoints: etcd3.client takes one host:port. The first endpoint is used; when a
request fails for want of a connection (UNAVAILABLE, or no answer in time) the
request is answered "error" and the next request goes to the next endpoint.

Waiting: the library's own acquire(timeout=wait_s), which retries through
tenacity with a wait function of the old two-argument form; tenacity 7 and
later no longer call it so and raise TypeError at the first busy try (python-etcd3
issue #2149), hence the environment's tenacity 6.3.1
(requirements/python-etcd3.txt).

Env FENCECHECK_ETCD3_ACQUIRE=context-manager (python-etcd3-with.adapter.json, --client python-etcd3-with):
acquire as `with client.lock(name, ttl=ttl_s) as lock:` does, i.e.
lock.__enter__(), which calls acquire() with its default timeout of 10 s and
ignores its result (python-etcd3 issue #599): the with-body runs either way, so
this mode answers ok either way, with "library_acquired" saying what acquire()
returned. No fence in that mode (the with-body has none).
"""

import math
import os

from fencecheck_adapter import Adapter, run

import etcd3
from etcd3 import exceptions as etcd_exc

LOCK_NAME_PREFIX = "fencecheck/python-etcd3/"

_CONNECTION_TROUBLE = (etcd_exc.ConnectionFailedError, etcd_exc.ConnectionTimeoutError)


class Etcd3LockAdapter(Adapter):
    renew_mode = "explicit"
    library = "python-etcd3 %s" % etcd3.__version__

    def __init__(self):
        self.context_manager = os.environ.get("FENCECHECK_ETCD3_ACQUIRE") == "context-manager"
        # The with-body has no fence; the plain acquire reads the key's create revision.
        self.fences = not self.context_manager

    def init(self, req):
        self.endpoints = [(e["host"], e["port"]) for e in req["endpoints"]]
        self.at = 0
        self.timeout_s = req.get("command_timeout_ms", 3000) / 1000.0
        self.prefix = req["owner_prefix"]
        self.count = 0
        self.holds = {}  # owner -> Lock
        self.client = None  # made at the first acquire; grpc connects lazily anyway

    def _client(self):
        if self.client is None:
            host, port = self.endpoints[self.at]
            # timeout: every RPC's deadline; a later answer is an unknown outcome.
            self.client = etcd3.client(host=host, port=port, timeout=self.timeout_s)
        return self.client

    def _next_endpoint(self):
        # The request that met trouble is answered "error" either way; only the
        # next one goes elsewhere. Locks keep working through any member.
        if self.client is not None:
            try:
                self.client.close()
            except Exception:  # noqa: BLE001 - closing a broken channel
                pass
        self.client = None
        self.at = (self.at + 1) % len(self.endpoints)

    def _guarded(self, fn, req):
        try:
            return fn(req)
        except _CONNECTION_TROUBLE as exc:
            self._next_endpoint()
            cause = exc.__context__
            details = cause.details() if hasattr(cause, "details") else ""
            if (details or "").startswith("failed to connect to all addresses") and req["type"] != "acquire":
                # gRPC never had a connection to send this RPC on: not done. Not for
                # acquire: it makes several RPCs, and the one that failed may be the
                # get after a transaction that did take the lock.
                return {"type": "fail", "error": "conn-refused", "detail": details[:200]}
            raise

    def acquire(self, req):
        return self._guarded(self._acquire, req)

    def renew(self, req):
        return self._guarded(self._renew, req)

    def release(self, req):
        return self._guarded(self._release, req)

    def _acquire(self, req):
        client = self._client()
        self.count += 1
        owner = "%s-h%d" % (self.prefix, self.count)
        lease_s = max(1, math.ceil(req["ttl_ms"] / 1000.0))
        lock = client.lock(LOCK_NAME_PREFIX + req["key"], ttl=lease_s)
        extra = {"lease_requested_s": lease_s, "lock_key": lock.key}
        if self.context_manager:
            got = self._enter(lock)
            self.holds[owner] = lock
            return dict({"type": "ok", "owner": owner, "fence": None, "library_acquired": got,
                         "lease_s": lock.lease.ttl if got else None}, **extra)
        got = lock.acquire(timeout=req["wait_ms"] / 1000.0)
        if not got:
            # Every try's transaction answered "the key exists": certainly not ours.
            return {"type": "fail", "error": "timeout" if req["wait_ms"] > 0 else "busy"}
        self.holds[owner] = lock
        value, meta = client.get(lock.key)
        if value != lock.uuid:
            # Granted, then gone (the lease ran out) before we could read its revision.
            self.holds.pop(owner, None)
            return {"type": "error", "error": "lock key not ours when its revision was read"}
        return dict({"type": "ok", "owner": owner, "fence": meta.create_revision,
                     "fence_source": "create-revision", "lease_s": lock.lease.ttl,
                     # The lease etcd granted (it may raise a short TTL to its minimum).
                     "ttl_ms": lock.lease.ttl * 1000,
                     "lease_id": lock.lease.id}, **extra)

    def _enter(self, lock):
        """What `with client.lock(...) as lock:` does: __enter__ calls acquire()
        with its default timeout of 10 s and ignores the result (issue #599)."""
        lock.__enter__()
        return lock.lease is not None

    def _lock_for(self, owner, pop=False):
        lock = self.holds.pop(owner, None) if pop else self.holds.get(owner)
        if lock is not None:
            # The hold may have been made through another endpoint's client.
            lock.etcd_client = self._client()
            if lock.lease is not None:
                lock.lease.etcd_client = lock.etcd_client
        return lock

    def _renew(self, req):
        lock = self._lock_for(req["owner"])
        if lock is None:
            return {"type": "fail", "error": "not-owner", "detail": "no such hold in this program"}
        if lock.lease is None:  # context-manager mode, acquire() failed: nothing to refresh
            return {"type": "fail", "error": "not-owner", "detail": "the lock has no lease"}
        replies = lock.refresh()
        ttl = replies[0].TTL if replies else 0
        if ttl <= 0:
            # etcd answers TTL 0 for a lease it no longer has: certainly not extended.
            return {"type": "fail", "error": "not-owner", "detail": "lease expired"}
        return {"type": "ok", "ttl_ms": ttl * 1000}

    def _release(self, req):
        lock = self._lock_for(req["owner"], pop=True)
        if lock is None:
            return {"type": "fail", "error": "not-owner", "detail": "no such hold in this program"}
        # (The end of a with-block, __exit__, is this same release() call.)
        # A transaction "value == our uuid -> delete": false when the key is not ours.
        released = lock.release()
        return {"type": "ok", "released": bool(released)}

    def close(self):
        if self.client is not None:
            self.client.close()


if __name__ == "__main__":
    run(Etcd3LockAdapter())
