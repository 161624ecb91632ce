// Redisson's RFencedLock, traced as `fencecheck traces` reads it (docs/traces.md).
//
// Copy this class into a service: it needs opentelemetry-api and Redisson, and the
// service's own OpenTelemetry SDK exports the spans (Demo.java sets one up). Each
// acquire and release is a span (lock.acquire, lock.release), and so is the write
// the lock protects (lock.write), with the attributes and outcome rules of
// fencecheck/otel (otel/index.ts) and of the Python example (traced_lock.py):
//
// - lock.outcome "ok"; "fail" only when the operation certainly did not happen
//   (the lock stayed taken for the wait); "unknown", with the ERROR status, when an
//   exception leaves it open (a timeout, a dropped connection), and the exception
//   goes on to the caller.
// - One trace per hold: the acquire's span is the parent of the hold's write and
//   release (and a child of whatever span is current when the acquire starts: none
//   in Demo.java, so there it is a trace's root). Head sampling then keeps or drops
//   a hold whole.
// - thread.id names the logical client, which has one lock operation at a time.
//
// The fence: Redisson 4.7.0 (the version adapters/java/redisson/pom.xml pins) has
// RFencedLock, whose tryLockAndGetToken INCRs a token in the same Lua script that
// grants the lock, so the fences are in the order of the grants. A plain RLock has
// none; an INCR after its grant would be only as good as the order of the INCRs
// (a holder that stalls between its grant and its INCR past its lease gets a higher
// fence than the holder that has the lock: traced_lock.py says more).
//
// No renew span: with a lease time Redisson has no owner-checked extend (RLock's
// expire() sets the key's TTL whoever holds it), and without one (leaseTime -1) its
// watchdog renews where no span sees it, so the trace would show the hold's lease
// as lockWatchdogTimeout from its grant: weaker than the truth, which hides
// anomalies and never makes one.
//
// Give Redisson setRetryAttempts(0): a lock script retried after its reply was lost
// re-enters the hold (Redisson's locks count re-entries), and an unlock then leaves
// it held until its lease ends.
package dev.fencecheck.examples.otel;

import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.common.AttributesBuilder;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.Scope;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import org.redisson.api.RFencedLock;
import org.redisson.api.RedissonClient;
import org.redisson.client.RedisTimeoutException;

public final class TracedLock {
  static final AttributeKey<String> KEY = AttributeKey.stringKey("lock.key");
  static final AttributeKey<String> OWNER = AttributeKey.stringKey("lock.owner");
  static final AttributeKey<Long> FENCE = AttributeKey.longKey("lock.fence");
  static final AttributeKey<Long> TTL = AttributeKey.longKey("lock.ttl_ms");
  static final AttributeKey<String> OUTCOME = AttributeKey.stringKey("lock.outcome");
  static final AttributeKey<String> ERROR = AttributeKey.stringKey("lock.error");
  static final AttributeKey<Boolean> RELEASED = AttributeKey.booleanKey("lock.released");
  static final AttributeKey<String> DATA = AttributeKey.stringKey("lock.data");
  static final AttributeKey<String> THREAD = AttributeKey.stringKey("thread.id");

  /** One grant: its key, owner, fence (the RFencedLock token) and lease, and the acquire span's context, the parent of the hold's later spans. */
  public record Hold(String key, String owner, long fence, long ttlMs, RFencedLock lock, Context context) {
    Attributes attributes() {
      return Attributes.of(KEY, key, OWNER, owner, FENCE, fence);
    }
  }

  private final RedissonClient redisson;
  private final Tracer tracer;
  private final String thread;

  /** Locks of `redisson`, each operation a span of logical thread `thread`. RLock is owned by the Java thread that took it: one TracedLock per thread. */
  public TracedLock(RedissonClient redisson, Tracer tracer, Object thread) {
    this.redisson = redisson;
    this.tracer = tracer;
    this.thread = String.valueOf(thread);
  }

  /** The operation may have happened: unknown, never fail. */
  private static RuntimeException unknown(Span span, RuntimeException e) {
    span.setAttribute(OUTCOME, "unknown");
    span.setAttribute(ERROR, e instanceof RedisTimeoutException ? "timeout" : "error");
    span.setStatus(StatusCode.ERROR, String.valueOf(e.getMessage()));
    return e;
  }

  /** A hold, or null when the lock stayed taken for waitMs. The lease is ttlMs: no watchdog. */
  public Hold acquire(String key, long ttlMs, long waitMs) {
    Span span = tracer.spanBuilder("lock.acquire").setAllAttributes(Attributes.of(KEY, key, TTL, ttlMs, THREAD, thread)).startSpan();
    try {
      RFencedLock lock = redisson.getFencedLock(key);
      Long token;
      try {
        token = lock.tryLockAndGetToken(waitMs, ttlMs, TimeUnit.MILLISECONDS);
      } catch (RuntimeException e) {
        throw unknown(span, e);
      }
      if (token == null) {
        span.setAttribute(OUTCOME, "fail");
        span.setAttribute(ERROR, waitMs > 0 ? "timeout" : "busy");
        return null;
      }
      // Redisson's own name for a holder (the lock hash's field) is the client's id
      // and the thread's, the same for every hold of a thread: the token makes it one
      // hold's.
      String owner = redisson.getId() + ":" + Thread.currentThread().getId() + "/" + token;
      Hold hold = new Hold(key, owner, token, ttlMs, lock, Context.current().with(span));
      span.setAllAttributes(hold.attributes());
      span.setAttribute(OUTCOME, "ok");
      return hold;
    } finally {
      span.end();
    }
  }

  /** Unlocks: true when the lock was this hold's and is freed, false when its lease had ended (nothing was deleted). */
  public boolean release(Hold hold) {
    Span span = tracer.spanBuilder("lock.release").setParent(hold.context()).setAllAttributes(hold.attributes()).setAttribute(THREAD, thread).startSpan();
    try {
      try {
        hold.lock().unlock();
      } catch (IllegalMonitorStateException e) {
        // Redisson's script found no field of this thread: the release happened and freed nothing.
        span.setAttribute(OUTCOME, "ok");
        span.setAttribute(RELEASED, false);
        return false;
      } catch (RuntimeException e) {
        throw unknown(span, e);
      }
      span.setAttribute(OUTCOME, "ok");
      span.setAttribute(RELEASED, true);
      return true;
    } finally {
      span.end();
    }
  }

  /**
   * The protected write as a lock.write span in the hold's trace: `write` returns
   * true when the resource took it, false when it refused the fence; an exception
   * is an unknown outcome. The span is current while `write` runs, so the store's
   * span (Demo's FencedStore makes a lock.decision) is its child.
   */
  public boolean write(Hold hold, String data, Callable<Boolean> write) throws Exception {
    AttributesBuilder attrs = hold.attributes().toBuilder().put(DATA, data).put(THREAD, thread);
    Span span = tracer.spanBuilder("lock.write").setParent(hold.context()).setAllAttributes(attrs.build()).startSpan();
    try (Scope ignored = span.makeCurrent()) {
      boolean accepted;
      try {
        accepted = write.call();
      } catch (RuntimeException e) {
        throw unknown(span, e);
      }
      span.setAttribute(OUTCOME, accepted ? "ok" : "fail");
      if (!accepted) span.setAttribute(ERROR, "stale-fence");
      return accepted;
    } finally {
      span.end();
    }
  }
}
