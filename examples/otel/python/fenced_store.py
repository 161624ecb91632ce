"""The demo's protected resource: one value per key in Redis, written by a script that checks fences.

The script is where the store decides, so the decision and its place among the
key's decisions come from inside it (one script runs at a time in Redis): the
lock.decision span carries them (docs/traces.md), and `fencecheck traces` orders
the writes by them rather than by the spans' clocks. java/.../FencedStore.java
runs the same script.
"""

from opentelemetry import trace

# KEYS[1]: the store's hash. ARGV: fence, data, fencing (1: refuse a fence not
# above every accepted one; 0: accept everything, the broken store).
# Returns {order, highest fence accepted before (-1: none), accepted 1/0}.
WRITE = """
local max = redis.call('HGET', KEYS[1], 'max_fence')
local order = redis.call('HINCRBY', KEYS[1], 'decisions', 1)
local fence = tonumber(ARGV[1])
local accepted = ARGV[3] == '0' or max == false or fence > tonumber(max)
if accepted then
  redis.call('HSET', KEYS[1], 'value', ARGV[2])
  if max == false or fence > tonumber(max) then redis.call('HSET', KEYS[1], 'max_fence', fence) end
end
return {order, max == false and -1 or tonumber(max), accepted and 1 or 0}
"""


class FencedStore:
    def __init__(self, r, fencing=True, tracer=None):
        self.r = r
        self.fencing = fencing
        self.script = r.register_script(WRITE)
        self.tracer = tracer or trace.get_tracer("fencecheck.examples.fenced_store")

    def write(self, hold, data):
        """True when the store took `data` with the hold's fence, False when it refused it."""
        attrs = {**hold.attributes(), "lock.data": data, "lock.fencing": self.fencing}
        # A child of the current span, the client's lock.write; a store that is a
        # service of its own would get that parent through the request's trace context.
        with self.tracer.start_as_current_span("lock.decision", attributes=attrs) as span:
            order, max_before, accepted = self.script(keys=[hold.key + ":store"], args=[hold.fence, data, 1 if self.fencing else 0])
            span.set_attributes({"lock.decision.accepted": accepted == 1, "lock.decision.order": order})
            if max_before >= 0:
                span.set_attribute("lock.decision.max_before", max_before)
            return accepted == 1
