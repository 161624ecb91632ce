// N threads take one RFencedLock in turn, write with its token as the fence,
// unlock; the spans go out over OTLP/HTTP. The Java twin of the Python example's
// demo.py, with its flags (but --renew, which TracedLock says Redisson lacks):
//
//   java -cp 'target/classes:target/dependency/*' dev.fencecheck.examples.otel.Demo \
//     --redis 127.0.0.1:6390 --otlp http://127.0.0.1:4390/v1/traces
//
// Each thread, until --seconds have passed: acquire (lease --ttl-ms, waiting up to
// --wait-ms), work for --hold-ms x a random 0.5..1.5, write
// "<instance>/<thread>#<n>" to the fenced store, unlock. With --ttl-ms below
// --hold-ms the holds outlive their leases: the lock lets the next thread in, the
// older holder writes late, and the store refuses it (or, with --no-fencing, takes
// it: stale-write-accepted in `fencecheck traces`).
package dev.fencecheck.examples.otel;

import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.exporter.otlp.http.trace.OtlpHttpSpanExporter;
import io.opentelemetry.sdk.resources.Resource;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.export.BatchSpanProcessor;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

public final class Demo {
  private static final Set<String> FLAGS = Set.of("--no-fencing");
  private static final Map<String, String> DEFAULTS = Map.of(
      "--threads", "4", "--seconds", "5", "--key", "orders/42", "--ttl-ms", "2000", "--hold-ms", "100", "--wait-ms", "5000");

  public static void main(String[] argv) throws Exception {
    Map<String, String> a = new HashMap<>(DEFAULTS);
    for (int i = 0; i < argv.length; i++) {
      String name = argv[i];
      if (FLAGS.contains(name)) a.put(name, "true");
      else if (name.equals("--renew")) usage("--renew: Redisson has no owner-checked extend of a lease-time lock (TracedLock.java says why)");
      else if ((DEFAULTS.containsKey(name) || name.equals("--redis") || name.equals("--otlp") || name.equals("--instance")) && i + 1 < argv.length) a.put(name, argv[++i]);
      else usage("unknown argument " + name);
    }
    if (!a.containsKey("--redis") || !a.containsKey("--otlp")) usage("--redis host:port and --otlp URL are required");
    String instance = a.getOrDefault("--instance", host() + "/" + ProcessHandle.current().pid());
    int threads = Integer.parseInt(a.get("--threads"));

    SdkTracerProvider provider = SdkTracerProvider.builder()
        .setResource(Resource.getDefault().merge(Resource.create(Attributes.of(
            AttributeKey.stringKey("service.name"), "fencecheck-otel-demo-java",
            AttributeKey.stringKey("service.instance.id"), instance))))
        .addSpanProcessor(BatchSpanProcessor.builder(OtlpHttpSpanExporter.builder().setEndpoint(a.get("--otlp")).build()).build())
        .build();
    Tracer tracer = provider.get("fencecheck.examples.traced_lock");

    Config config = new Config();
    config.useSingleServer()
        .setAddress("redis://" + a.get("--redis"))
        .setTimeout(2000)
        .setConnectTimeout(2000)
        // Each command sent once (TracedLock.java says why).
        .setRetryAttempts(0);
    RedissonClient redisson = Redisson.create(config);
    FencedStore store = new FencedStore(redisson, !a.containsKey("--no-fencing"), tracer);

    long end = System.nanoTime() + (long) (Double.parseDouble(a.get("--seconds")) * 1e9);
    int[] counts = new int[threads];
    List<Thread> workers = new ArrayList<>();
    for (int n = 0; n < threads; n++) {
      int me = n;
      workers.add(new Thread(() -> work(me, a, instance, new TracedLock(redisson, tracer, me), store, end, counts), "worker-" + n));
    }
    workers.forEach(Thread::start);
    for (Thread t : workers) t.join();
    redisson.shutdown();
    // Exports what the batch holds before exiting.
    provider.shutdown().join(10, TimeUnit.SECONDS);
    System.out.println("holds written and released per thread: " + java.util.Arrays.toString(counts));
  }

  private static void work(int n, Map<String, String> a, String instance, TracedLock lock, FencedStore store, long end, int[] counts) {
    ThreadLocalRandom rnd = ThreadLocalRandom.current();
    long ttl = Long.parseLong(a.get("--ttl-ms"));
    long wait = Long.parseLong(a.get("--wait-ms"));
    long holdMs = Long.parseLong(a.get("--hold-ms"));
    int writes = 0;
    while (System.nanoTime() < end) {
      try {
        TracedLock.Hold hold = lock.acquire(a.get("--key"), ttl, wait);
        if (hold != null) {
          Thread.sleep((long) (holdMs * rnd.nextDouble(0.5, 1.5)));
          String data = instance + "/" + n + "#" + ++writes;
          lock.write(hold, data, () -> store.write(hold, data));
          lock.release(hold);
          counts[n]++;
        }
        // As in demo.py: a thread that took the lock again at once could starve the others.
        Thread.sleep(rnd.nextLong(0, 100));
      } catch (InterruptedException e) {
        return;
      } catch (Exception e) {
        // Its span says unknown; this thread's history goes on as a new process.
        System.err.println("thread " + n + ": " + e);
      }
    }
  }

  private static String host() {
    try {
      return InetAddress.getLocalHost().getHostName();
    } catch (Exception e) {
      return "localhost";
    }
  }

  private static void usage(String why) {
    System.err.println("Demo: " + why + "\nusage: Demo --redis HOST:PORT --otlp URL [--threads N] [--seconds S] [--key K] [--ttl-ms MS] [--hold-ms MS] [--wait-ms MS] [--no-fencing] [--instance ID]");
    System.exit(2);
  }
}
