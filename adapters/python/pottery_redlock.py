"""pottery's Redlock over the Redlock backend's five Redis nodes, behind fencecheck's adapter protocol.

The lock as its documentation says: Redlock(key=name, masters={five Redis
clients}, auto_release_time=ttl_s), acquire(blocking, timeout), extend(),
release(). Under the hood: SET redlock:<name> <uuid4> NX PX on every master at
once, granted at the first majority if auto_release_time - drift - elapsed is
still positive (the other SETs finish in the background); retried after a
random 0-200 ms while blocking; extend() and release() are owner-checked Lua
scripts that need a majority. extend() resets the lease to auto_release_time
and may be called num_extensions times (3 by default), then raises
TooManyExtensions. It issues no fencing token (fences false): with --fence on,
fencecheck takes fences from Redis counters (--fence-source single). Its
environment is the hashed requirements file requirements/pottery.txt (the
manifest's `environment`): pottery 3.0.1 on redis-py 8.1.0.

Outcomes. Each Redis client sends a command once (redis-py 8 would retry it).
pottery swallows the masters' RedisErrors (raise_on_redis_errors is off by
default) and counts an erroring master as a "no": an acquire that returns False
after a master's error may still have SET the key on some (pottery then tries
to delete it everywhere, which may fail too), so it is "error", not "fail";
False with every master answering is "fail". extend() and release() raise with
the masters' errors attached: "error" when there were any.
"""

import logging
import threading
from importlib.metadata import version

from fencecheck_adapter import Adapter, run
from fencecheck_redis import once_client

import redis
from pottery import Redlock
from pottery.exceptions import ExtendUnlockedLock, ReleaseUnlockedLock, TooManyExtensions


class _MasterErrors(logging.Handler):
    """pottery logs each master's RedisError (logger.exception) on the thread that
    called it, and says nothing else of them when acquire() returns False: count
    them, per calling thread."""

    def __init__(self):
        super().__init__(logging.ERROR)
        self.counts = {}

    def emit(self, record):
        if record.exc_info:
            self.counts[record.thread] = self.counts.get(record.thread, 0) + 1

    def during(self, call):
        me = threading.get_ident()
        self.counts[me] = 0
        result = call()
        return result, self.counts.pop(me, 0)


class PotteryRedlock(Adapter):
    fences = False
    renew_mode = "explicit"
    library = "pottery %s (redis-py %s)" % (version("pottery"), redis.__version__)

    def init(self, req):
        timeout_s = req.get("command_timeout_ms", 3000) / 1000.0
        self.prefix = req["owner_prefix"]
        self.holds = 0
        self.locks = {}  # owner -> Redlock
        # redis.Redis connects lazily, at its first command: init stays offline.
        self.masters = frozenset(once_client(ep, timeout_s) for ep in req["endpoints"])
        self.errors = _MasterErrors()
        logging.getLogger("pottery").addHandler(self.errors)

    def acquire(self, req):
        self.holds += 1
        owner = "%s-h%d" % (self.prefix, self.holds)
        wait_s = req["wait_ms"] / 1000.0
        lock = Redlock(key=req["key"], masters=self.masters, auto_release_time=req["ttl_ms"] / 1000.0)
        if wait_s > 0:
            got, errors = self.errors.during(lambda: lock.acquire(blocking=True, timeout=wait_s))
        else:
            got, errors = self.errors.during(lambda: lock.acquire(blocking=False))
        if not got:
            if errors:
                return {"type": "error", "error": "no quorum, %d master errors" % errors}
            return {"type": "fail", "error": "timeout" if wait_s > 0 else "busy"}
        self.locks[owner] = lock
        return {"type": "ok", "owner": owner, "fence": None, "uuid": lock._uuid}

    def renew(self, req):
        lock = self.locks.get(req["owner"])
        if lock is None:
            return {"type": "fail", "error": "not-owner", "detail": "no such hold in this program"}
        # extend() resets the lease to auto_release_time: the renew's TTL, when it asks another.
        lock.auto_release_time = req["ttl_ms"] / 1000.0
        try:
            lock.extend()
        except TooManyExtensions:
            # Refused before anything was sent: the lease runs out as it stands.
            return {"type": "fail", "error": "too-many-extensions", "detail": "num_extensions is %d" % lock.num_extensions}
        except ExtendUnlockedLock as exc:
            if exc.redis_errors:
                return {"type": "error", "error": "no majority extended, %d master errors" % len(exc.redis_errors)}
            return {"type": "fail", "error": "not-owner"}
        return {"type": "ok", "ttl_ms": req["ttl_ms"]}

    def release(self, req):
        lock = self.locks.pop(req["owner"], None)
        if lock is None:
            return {"type": "fail", "error": "not-owner", "detail": "no such hold in this program"}
        try:
            lock.release()
        except ReleaseUnlockedLock as exc:
            if exc.redis_errors:
                return {"type": "error", "error": "no majority released, %d master errors" % len(exc.redis_errors)}
            # Every master answered and no majority held our uuid: the lease had ended.
            return {"type": "ok", "released": False, "lost": "not-owned"}
        return {"type": "ok", "released": True}

    def close(self):
        for m in self.masters:
            m.close()


if __name__ == "__main__":
    run(PotteryRedlock())
