"""redis-py's redis.lock.Lock, traced as `fencecheck traces` reads it (docs/traces.md).

Copy this file into a service: it needs opentelemetry-api and redis, and the
service's own OpenTelemetry SDK exports the spans (demo.py sets one up). Each
acquire, extend and release is a span (lock.acquire, lock.renew, lock.release),
and so is the write the lock protects (lock.write), with the attributes and
outcome rules of fencecheck/otel (otel/index.ts), the JS wrapper:

- lock.outcome "ok"; "fail" only when the operation certainly did not happen
  (the lock stayed taken, the script found another token); "unknown", with the
  ERROR status, when an exception leaves it open (a timeout, a dropped
  connection), and the exception goes on to the caller.
- One trace per hold: the acquire's span is the parent of the hold's renews,
  writes and release (and a child of whatever span is current when the acquire
  starts: none in demo.py, so there it is a trace's root). Head sampling then
  keeps or drops a hold whole.
- thread.id names the logical client, which has one lock operation at a time.

The redis client given must send each command once (redis.retry.Retry(NoBackoff(),
0)): redis-py 8 otherwise retries on a timeout, and a SET NX that landed but
whose reply was lost is sent again, finds the key taken and returns False, a
span saying "fail" for a lock this token holds.
"""

from dataclasses import dataclass

from opentelemetry import context, trace
from opentelemetry.trace import Status, StatusCode
from redis.exceptions import LockNotOwnedError
from redis.exceptions import TimeoutError as RedisTimeoutError

TRACER = "fencecheck.examples.traced_lock"


@dataclass
class Hold:
    """One grant: its key, owner (redis-py's token, fresh at every acquire), fence and lease."""
    key: str
    owner: str
    fence: int
    ttl_ms: int
    lock: object
    # The acquire span's context: the parent of the hold's later spans.
    ctx: object

    def attributes(self):
        return {"lock.key": self.key, "lock.owner": self.owner, "lock.fence": self.fence}


def _unknown(span, exc):
    # The operation may have happened: unknown, never fail.
    span.set_attributes({"lock.outcome": "unknown", "lock.error": "timeout" if isinstance(exc, RedisTimeoutError) else "error"})
    span.set_status(Status(StatusCode.ERROR, str(exc)))


class TracedLock:
    """redis-py locks on `r`, each operation a span of thread `thread`."""

    def __init__(self, r, thread, tracer=None):
        self.r = r
        self.thread = str(thread)
        self.tracer = tracer or trace.get_tracer(TRACER)

    def acquire(self, key, ttl_ms, wait_ms):
        """A Hold, or None when the lock stayed taken for wait_ms (0: one try)."""
        attrs = {"lock.key": key, "lock.ttl_ms": ttl_ms, "thread.id": self.thread}
        with self.tracer.start_as_current_span("lock.acquire", attributes=attrs, record_exception=False, set_status_on_exception=False) as span:
            lock = self.r.lock(key, timeout=ttl_ms / 1000.0, blocking_timeout=wait_ms / 1000.0)
            try:
                got = lock.acquire(blocking=wait_ms > 0)
                if not got:
                    span.set_attributes({"lock.outcome": "fail", "lock.error": "timeout" if wait_ms > 0 else "busy"})
                    return None
                # redis-py's Lock has no fence: one from a counter, right after the
                # grant. It is only as good as the order of the INCRs: a holder that
                # stalls between its SET and its INCR (a GC pause, a slow link) past
                # its lease can INCR after the next holder did, and then carries the
                # higher fence while the other holds the lock; the store accepts the
                # stale holder and refuses the rightful one. A fence made in the
                # grant's own script (Redisson's RFencedLock) has no such window.
                fence = self.r.incr(key + ":fence")
            except Exception as exc:
                _unknown(span, exc)
                raise
            token = lock.local.token
            owner = token.decode() if isinstance(token, bytes) else token
            hold = Hold(key, owner, fence, ttl_ms, lock, trace.set_span_in_context(span, context.get_current()))
            span.set_attributes({"lock.outcome": "ok", **hold.attributes(), "lock.ttl_ms": ttl_ms})
            return hold

    def renew(self, hold, ttl_ms):
        """Extends the lease to ttl_ms from now: True, or False when the lock was no longer this hold's."""
        attrs = {**hold.attributes(), "lock.ttl_ms": ttl_ms, "thread.id": self.thread}
        with self.tracer.start_as_current_span("lock.renew", context=hold.ctx, attributes=attrs,
                                               record_exception=False, set_status_on_exception=False) as span:
            try:
                hold.lock.extend(ttl_ms / 1000.0, replace_ttl=True)
            except LockNotOwnedError:
                # The owner-checked script found another token or none, and changed nothing.
                span.set_attributes({"lock.outcome": "fail", "lock.error": "not-owner"})
                return False
            except Exception as exc:
                _unknown(span, exc)
                raise
            hold.ttl_ms = ttl_ms
            span.set_attribute("lock.outcome", "ok")
            return True

    def release(self, hold):
        """Releases: True when the key was this hold's and is deleted, False when the lease had ended."""
        attrs = {**hold.attributes(), "thread.id": self.thread}
        with self.tracer.start_as_current_span("lock.release", context=hold.ctx, attributes=attrs,
                                               record_exception=False, set_status_on_exception=False) as span:
            try:
                hold.lock.release()
            except LockNotOwnedError:
                # The release happened and deleted nothing: ok, released false.
                span.set_attributes({"lock.outcome": "ok", "lock.released": False})
                return False
            except Exception as exc:
                _unknown(span, exc)
                raise
            span.set_attributes({"lock.outcome": "ok", "lock.released": True})
            return True

    def write(self, hold, data, write):
        """The protected write as a lock.write span in the hold's trace.

        `write()` returns True when the resource took it, False when it refused
        the fence; an exception is an unknown outcome. Its spans (demo.py's
        store makes a lock.decision) are children of this one."""
        attrs = {**hold.attributes(), "lock.data": data, "thread.id": self.thread}
        with self.tracer.start_as_current_span("lock.write", context=hold.ctx, attributes=attrs,
                                               record_exception=False, set_status_on_exception=False) as span:
            try:
                accepted = write()
            except Exception as exc:
                _unknown(span, exc)
                raise
            span.set_attributes({"lock.outcome": "ok"} if accepted else {"lock.outcome": "fail", "lock.error": "stale-fence"})
            return accepted
