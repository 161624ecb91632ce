"""python-redis-lock's redis_lock.Lock, renewed by its own thread, behind fencecheck's adapter protocol.

The lock as its documentation says: Lock(conn, name, expire=ttl_s,
auto_renewal=True), acquire(blocking, timeout), release(). Under the hood: SET
lock:<name> <random id> NX EX expire; a waiter BLPOPs lock-signal:<name>, which
release() pushes to; a daemon thread started by acquire() calls extend() every
expire*2/3 s (a Lua script that compares the id, then EXPIREs); release() stops
the thread and deletes the key in an owner-checked Lua script. It issues no
fencing token (fences false): with --fence on, fencecheck takes fences from a
Redis counter itself (--fence-source single). Its environment is the hashed
requirements file requirements/python-redis-lock.txt (the manifest's
`environment`): python-redis-lock 4.0.1 on redis-py 8.1.0.

Renew is "automatic": the library's thread keeps the lease, so fencecheck sends
no renew. The library never tells its user that the thread failed: an extend()
that finds another id raises NotAcquired inside the thread, which dies, and the
holder learns of it only when release() raises NotAcquired. That uncaught
exception is the one sign there is, so this adapter catches it (threading's
excepthook) and sends a `lost` notice for the hold: "told" here means "the
renewal thread died", as a user who hooks it would see.

Its units are whole seconds: expire and timeout go through int(). A TTL below
1 s would make expire 0, which the library takes as "never expires" (and then
fails to start its thread), so such an acquire is refused with fail
ttl-below-1s before anything is sent. A TTL that is not whole seconds is cut
down as the library cuts it, and the ok says the lease it got (ttl_ms). The
acquire's wait is rounded up to whole seconds for the same reason.

Outcomes: redis-py 8 retries a command on errors by default; here each is sent
once (retry with 0 retries), so a refused connection before anything was sent
is fail conn-refused, and a timeout or broken connection after a command left
is "error".
"""

import math
import threading
from importlib.metadata import version

from fencecheck_adapter import Adapter, notice, run
from fencecheck_redis import connect_first, once_client

import redis
import redis_lock


class PythonRedisLock(Adapter):
    fences = False
    renew_mode = "automatic"
    library = "python-redis-lock %s (redis-py %s)" % (version("python-redis-lock"), redis.__version__)

    def init(self, req):
        self.endpoint = req["endpoints"][0]
        self.command_timeout_s = req.get("command_timeout_ms", 3000) / 1000.0
        self.prefix = req["owner_prefix"]
        self.holds = 0
        self.locks = {}  # owner -> (key, Lock)
        self.renewers = {}  # renewal thread -> (key, owner)
        self.r = None
        self.wait_s = None
        self._previous_hook = threading.excepthook
        threading.excepthook = self._renewer_died

    def _client(self, wait_s):
        """The one Redis client, made at the first acquire: BLPOP waits up to the
        acquire's whole timeout on its socket, so the socket's timeout is that
        wait plus the command timeout (redis-py does not stretch it for blocking
        commands). A later acquire with a longer wait gets a new client."""
        if self.r is None or wait_s > self.wait_s:
            self.wait_s = wait_s
            self.r = once_client(self.endpoint, self.command_timeout_s + wait_s, self.command_timeout_s)
        return self.r

    def _renewer_died(self, args):
        held = self.renewers.pop(args.thread, None)
        if held is None:
            self._previous_hook(args)
            return
        key, owner = held
        # NotAcquired: the key holds another id or none. Any other exception (a
        # timeout, a broken connection) ends the thread just the same: nothing
        # renews the lease any more, and it lapses within `expire`.
        notice({"type": "lost", "key": key, "owner": owner, "reason": "%s: %s" % (type(args.exc_value).__name__, args.exc_value)})

    def _let_go_of_abandoned(self, key):
        # A hold the workload gave up on after an unknown outcome: its process
        # would be gone, and its renewal thread with it. Stop the thread and let
        # the key lapse, as it would then; nothing is sent.
        for owner, (k, lock) in list(self.locks.items()):
            if k == key:
                del self.locks[owner]
                thread = lock._lock_renewal_thread
                lock._stop_lock_renewer()
                self.renewers.pop(thread, None)

    def acquire(self, req):
        key = req["key"]
        expire_s = int(req["ttl_ms"] / 1000)
        if expire_s < 1:
            return {"type": "fail", "error": "ttl-below-1s", "detail": "python-redis-lock's expire is whole seconds"}
        self._let_go_of_abandoned(key)
        self.holds += 1
        owner = "%s-h%d" % (self.prefix, self.holds)
        wait_s = math.ceil(req["wait_ms"] / 1000.0)
        r = self._client(wait_s)
        refused = connect_first(r)
        if refused:
            return refused
        lock = redis_lock.Lock(r, key, expire=expire_s, auto_renewal=True)
        # Timeouts and broken connections raise: the run loop answers "error".
        got = lock.acquire(blocking=True, timeout=wait_s) if wait_s > 0 else lock.acquire(blocking=False)
        if not got:
            return {"type": "fail", "error": "timeout" if wait_s > 0 else "busy"}
        self.locks[owner] = (key, lock)
        self.renewers[lock._lock_renewal_thread] = (key, owner)
        reply = {"type": "ok", "owner": owner, "fence": None, "lock_id": lock.id}
        if expire_s * 1000 != req["ttl_ms"]:
            reply["ttl_ms"] = expire_s * 1000
        return reply

    def release(self, req):
        held = self.locks.pop(req["owner"], None)
        if held is None:
            return {"type": "fail", "error": "not-owner", "detail": "no such hold in this program"}
        _, lock = held
        thread = lock._lock_renewal_thread
        refused = connect_first(self.r)
        if refused:
            return refused
        try:
            # It stops the renewal thread first. A thread that dies meanwhile (it
            # woke with the holder from a pause and found the key gone) still
            # tells: a lost notice may come while the release is outstanding.
            lock.release()
        except redis_lock.NotAcquired:
            # The script found another id or none: it deleted nothing.
            return {"type": "ok", "released": False, "lost": "not-owned"}
        finally:
            self.renewers.pop(thread, None)
        return {"type": "ok", "released": True}

    def close(self):
        if self.r is not None:
            self.r.close()


if __name__ == "__main__":
    run(PythonRedisLock())
