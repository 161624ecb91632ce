"""redis-py's redis.lock.Lock behind fencecheck's adapter protocol.

The lock as redis-py documents it: r.lock(name, timeout=ttl_s,
blocking_timeout=wait_s), acquire(), reacquire()/extend() to renew, release().
Under the hood: SET name <uuid token> NX PX ttl, polled every 0.1 s while
blocking; owner-checked Lua scripts for extend, reacquire and release. It issues
no fencing token (fences false): with --fence on, fencecheck takes fences from a
Redis counter itself (--fence-source single).

Outcomes. redis-py is set to send every command once (no retry on error or
timeout), so:
- a refused connection before anything was sent is "fail" (conn-refused): we
  connect explicitly first, so that failure cannot be confused with one after a
  command left;
- a socket timeout or a connection that broke after a command was written is
  "error" (the SET, the extend or the release may have been applied);
- acquire returning False (the key stayed taken until blocking_timeout) is
  "fail"; a LockNotOwnedError from reacquire/extend is "fail not-owner" (the Lua
  script compared the token and did nothing); from release it is
  "ok released:false" (the lease had ended; the script deleted nothing).

Env FENCECHECK_REDIS_PY_LOCK_TIMEOUT (redis-py-timeout-0.adapter.json, --client redis-py-timeout-0, sets it to "0"):
a lock made with that timeout in seconds instead of the request's ttl, as a user
who wants "held until released" writes r.lock(name, timeout=0). With 0, SET has
no PX, and reacquire() sends PEXPIRE key 0, which deletes the key and still
returns True (redis-py issue #4279).
"""

import os

from fencecheck_adapter import Adapter, run
from fencecheck_redis import connect_first, once_client

import redis
from redis.exceptions import LockNotOwnedError


class RedisPyLock(Adapter):
    fences = False
    renew_mode = "explicit"
    library = "redis-py %s" % redis.__version__

    def init(self, req):
        ep = req["endpoints"][0]
        timeout_s = req.get("command_timeout_ms", 3000) / 1000.0
        self.prefix = req["owner_prefix"]
        self.holds = 0
        self.locks = {}  # owner -> Lock
        fixed = os.environ.get("FENCECHECK_REDIS_PY_LOCK_TIMEOUT")
        self.fixed_timeout = float(fixed) if fixed not in (None, "") else None
        # Connects lazily, at its first command: init stays offline. Each command is sent once.
        self.r = once_client(ep, timeout_s)

    def acquire(self, req):
        self.holds += 1
        owner = "%s-h%d" % (self.prefix, self.holds)
        ttl_s = req["ttl_ms"] / 1000.0 if self.fixed_timeout is None else self.fixed_timeout
        wait_s = req["wait_ms"] / 1000.0
        refused = connect_first(self.r)
        if refused:
            return refused
        lock = self.r.lock(req["key"], timeout=ttl_s, blocking_timeout=wait_s)
        # Timeouts and broken connections raise: the run loop answers "error".
        got = lock.acquire(blocking=wait_s > 0)
        if not got:
            return {"type": "fail", "error": "timeout" if wait_s > 0 else "busy"}
        self.locks[owner] = lock
        token = lock.local.token
        return {"type": "ok", "owner": owner, "fence": None,
                "token": token.decode() if isinstance(token, bytes) else token,
                "lock_timeout_s": ttl_s}

    def renew(self, req):
        lock = self.locks.get(req["owner"])
        if lock is None:
            return {"type": "fail", "error": "not-owner", "detail": "no such hold in this program"}
        refused = connect_first(self.r)
        if refused:
            return refused
        ttl_s = req["ttl_ms"] / 1000.0
        try:
            if self.fixed_timeout is not None or ttl_s == lock.timeout:
                lock.reacquire()  # back to the lock's own timeout
            else:
                lock.extend(ttl_s, replace_ttl=True)
        except LockNotOwnedError:
            return {"type": "fail", "error": "not-owner"}
        return {"type": "ok", "ttl_ms": int(round(lock.timeout * 1000)) if self.fixed_timeout is None else req["ttl_ms"]}

    def release(self, req):
        lock = self.locks.pop(req["owner"], None)
        if lock is None:
            return {"type": "fail", "error": "not-owner", "detail": "no such hold in this program"}
        refused = connect_first(self.r)
        if refused:
            return refused
        try:
            lock.release()
        except LockNotOwnedError:
            # The script found another token or none: it deleted nothing.
            return {"type": "ok", "released": False, "lost": "not-owned"}
        return {"type": "ok", "released": True}

    def close(self):
        self.r.close()


if __name__ == "__main__":
    run(RedisPyLock())
