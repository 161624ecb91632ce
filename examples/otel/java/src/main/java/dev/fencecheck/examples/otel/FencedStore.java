// The demo's protected resource: one value per key in Redis, written by a script
// that checks fences, the same script as the Python example's fenced_store.py. The
// script is where the store decides, so the decision and its place among the key's
// decisions come from inside it (one script runs at a time in Redis): the
// lock.decision span carries them (docs/traces.md), and `fencecheck traces` orders
// the writes by them rather than by the spans' clocks.
package dev.fencecheck.examples.otel;

import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.Tracer;
import java.util.List;
import org.redisson.api.RScript;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.StringCodec;

public final class FencedStore {
  // KEYS[1]: the store's hash. ARGV: fence, data, fencing (1: refuse a fence not
  // above every accepted one; 0: accept everything, the broken store).
  // Returns {order, highest fence accepted before (-1: none), accepted 1/0}.
  static final String WRITE = """
      local max = redis.call('HGET', KEYS[1], 'max_fence')
      local order = redis.call('HINCRBY', KEYS[1], 'decisions', 1)
      local fence = tonumber(ARGV[1])
      local accepted = ARGV[3] == '0' or max == false or fence > tonumber(max)
      if accepted then
        redis.call('HSET', KEYS[1], 'value', ARGV[2])
        if max == false or fence > tonumber(max) then redis.call('HSET', KEYS[1], 'max_fence', fence) end
      end
      return {order, max == false and -1 or tonumber(max), accepted and 1 or 0}
      """;

  private final RScript script;
  private final boolean fencing;
  private final Tracer tracer;

  public FencedStore(RedissonClient redisson, boolean fencing, Tracer tracer) {
    this.script = redisson.getScript(StringCodec.INSTANCE);
    this.fencing = fencing;
    this.tracer = tracer;
  }

  /** True when the store took `data` with the hold's fence, false when it refused it. */
  public boolean write(TracedLock.Hold hold, String data) {
    // A child of the current span, the client's lock.write; a store that is a service
    // of its own would get that parent through the request's trace context.
    Span span = tracer.spanBuilder("lock.decision").setAllAttributes(hold.attributes())
        .setAttribute(TracedLock.DATA, data).setAttribute("lock.fencing", fencing).startSpan();
    try {
      List<Long> r = script.eval(RScript.Mode.READ_WRITE, WRITE, RScript.ReturnType.LIST, List.of(hold.key() + ":store"),
          Long.toString(hold.fence()), data, fencing ? "1" : "0");
      boolean accepted = r.get(2) == 1L;
      span.setAttribute("lock.decision.accepted", accepted);
      span.setAttribute(AttributeKey.longKey("lock.decision.order"), r.get(0));
      if (r.get(1) >= 0) span.setAttribute(AttributeKey.longKey("lock.decision.max_before"), r.get(1));
      return accepted;
    } finally {
      span.end();
    }
  }
}
