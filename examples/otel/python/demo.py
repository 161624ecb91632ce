"""N threads take one redis-py lock in turn, write with its fence, release; the spans go out over OTLP/HTTP.

    python3 demo.py --redis 127.0.0.1:6390 --otlp http://127.0.0.1:4390/v1/traces

Each thread, until --seconds have passed: acquire (lease --ttl-ms, waiting up
to --wait-ms), work for --hold-ms x a random 0.5..1.5 (with --renew, extending
the lease half way), write "<instance>/<thread>#<n>" to the fenced store,
release. With --ttl-ms below --hold-ms the holds outlive their leases: the lock
lets the next thread in, the older holder writes late, and the store refuses it
(or, with --no-fencing, takes it: stale-write-accepted in `fencecheck traces`).
"""

import argparse
import os
import random
import socket
import sys
import threading
import time

import redis
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from redis.backoff import NoBackoff
from redis.retry import Retry

from fenced_store import FencedStore
from traced_lock import TracedLock


def args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--redis", required=True, help="host:port of the Redis holding the lock and the store")
    p.add_argument("--otlp", required=True, help="OTLP/HTTP traces endpoint, e.g. http://127.0.0.1:4390/v1/traces")
    p.add_argument("--threads", type=int, default=4)
    p.add_argument("--seconds", type=float, default=5.0)
    p.add_argument("--key", default="orders/42")
    p.add_argument("--ttl-ms", type=int, default=2000)
    p.add_argument("--hold-ms", type=int, default=100)
    p.add_argument("--wait-ms", type=int, default=5000)
    p.add_argument("--renew", action="store_true", help="extend the lease half way through each hold")
    p.add_argument("--no-fencing", action="store_true", help="the store accepts every write, whatever its fence")
    p.add_argument("--instance", default="%s/%d" % (socket.gethostname(), os.getpid()), help="service.instance.id")
    return p.parse_args()


def worker(n, a, r, store, counts):
    lock = TracedLock(r, n)
    rnd = random.Random()
    end = time.monotonic() + a.seconds
    writes = 0
    while time.monotonic() < end:
        try:
            hold = lock.acquire(a.key, a.ttl_ms, a.wait_ms)
            if hold is None:
                continue
            work = a.hold_ms * rnd.uniform(0.5, 1.5) / 1000.0
            if a.renew:
                time.sleep(work / 2)
                if not lock.renew(hold, a.ttl_ms):
                    # The lock is no longer ours: a holder that knows it does not write.
                    lock.release(hold)
                    continue
                work /= 2
            time.sleep(work)
            writes += 1
            data = "%s/%d#%d" % (a.instance, n, writes)
            lock.write(hold, data, lambda: store.write(hold, data))
            lock.release(hold)
            counts[n] += 1
        except redis.RedisError as exc:
            # Its span says unknown; this thread's history goes on as a new process.
            print("thread %d: %s" % (n, exc), file=sys.stderr)
        # redis-py's waiters poll every 0.1 s: a thread that took the lock again at
        # once would starve them.
        time.sleep(rnd.uniform(0, 0.1))


def main():
    a = args()
    host, port = a.redis.rsplit(":", 1)
    provider = TracerProvider(resource=Resource.create({"service.name": "fencecheck-otel-demo-python", "service.instance.id": a.instance}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=a.otlp)))
    trace.set_tracer_provider(provider)
    # Each command sent once (traced_lock.py says why); one pool for all threads.
    r = redis.Redis(host=host, port=int(port), socket_timeout=2, socket_connect_timeout=2, retry=Retry(NoBackoff(), 0))
    store = FencedStore(r, fencing=not a.no_fencing)
    counts = [0] * a.threads
    threads = [threading.Thread(target=worker, args=(n, a, r, store, counts)) for n in range(a.threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    # Exports what the batch holds before exiting.
    provider.shutdown()
    print("holds written and released per thread: %s" % counts)


if __name__ == "__main__":
    main()
