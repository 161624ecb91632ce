// fencecheck's adapter for Redisson's locks (protocol 1, docs/adapter-protocol.md): JSON
// lines on stdin, replies on stdout, logs on stderr. One program per logical client,
// compiled with pom.xml's environment (Redisson and slf4j-simple, to stderr, and
// fencecheck.Json); ../jvm.sh execs a small JVM.
//
// Two locks, by argument: none, RLock (redisson.adapter.json, "fences": false); "--fenced",
// RFencedLock (redisson-fenced.adapter.json, "fences": true, the fence is the token
// tryLockAndGetToken returns, an INCR in Redis made in the same script as the grant).
//
// As Redisson's documentation says: one RedissonClient, single-server config to the
// endpoint init names, getLock(key) / getFencedLock(key), tryLock(waitTime, leaseTime = -1,
// MILLISECONDS) so the lock watchdog renews the lease every watchdogTimeout / 3 while held,
// with Config.setLockWatchdogTimeout = the run's ttl_ms; unlock() to release, forceUnlock()
// never. The manifest says "renew": "automatic".
//
// Choices, each for a reason:
// - The client is made at the first acquire, not at init: Redisson.create() connects
//   (and throws when nothing listens), and init must answer without connecting. When it
//   throws there is no client and nothing was sent: fail "conn-refused"; the next acquire
//   tries again.
// - Timeout, connect timeout and subscription timeout = command_timeout_ms; retryAttempts 0:
//   a lock script retried after it ran would re-enter (HINCRBY twice) and leave the lock
//   held by one count after the release. With no retry a timed-out command is an error.
// - A Redisson lock is owned by a thread id (the hash field is "<client uuid>:<thread id>"),
//   so each acquire is made from a fresh short-lived thread, whose id (never reused in a
//   JVM) becomes the hold's: two holds of this program are never one re-entered hold.
//   The release is unlockAsync(thatId) from the main thread.
// - A hold the workload abandoned (after an unknown outcome the new logical process never
//   releases the old one) would be renewed by the watchdog forever: before acquiring a key,
//   every earlier hold and every errored acquire of this program on that key is unlocked
//   (quietly; IllegalMonitorStateException means it was not held). One that cannot be
//   (a timeout: the connection is bad) stays on the list and the acquire answers error
//   without trying, so a clearing and an acquire never both wait for command_timeout_ms.
// - tryLock false: the last attempt's script answered that another owner holds it, so
//   "timeout" (or "busy" for wait_ms 0) is definite. An exception or a timed-out future:
//   error.
// - release: IllegalMonitorStateException (the hash field is gone: the lease ended) is
//   ok released:false; other exceptions are errors.
// - Not done: "lost" notices. Redisson's watchdog logs a failed renewal and stops, but
//   tells its user nothing; a pause longer than the watchdog timeout lets the lease expire
//   in Redis while this JVM, frozen with it, still believes it holds.
import static fencecheck.Protocol.*;

import fencecheck.Json;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;

import org.redisson.Redisson;
import org.redisson.api.RFencedLock;
import org.redisson.api.RLock;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

public final class RedissonLock implements LockHandler {
  static final String LIBRARY_VERSION = jarVersion("redisson");

  static void log(String s) {
    System.err.println("[redisson-adapter] " + s);
    System.err.flush();
  }

  static Throwable root(Throwable t) {
    while ((t instanceof ExecutionException || t instanceof java.util.concurrent.CompletionException) && t.getCause() != null) t = t.getCause();
    return t;
  }

  /** A hold: the key and the thread id Redisson owns it by. */
  record Hold(String key, long threadId) {}

  final boolean fenced;
  RedissonClient client;
  String host;
  int port;
  String ownerPrefix = "c";
  long ttlMs = 30000;
  int commandTimeoutMs = 3000;
  int holdCount = 0;
  final Map<String, Hold> holds = new HashMap<>();
  /** Thread ids of acquires answered error, by key: maybe held, to be unlocked before the key is acquired again. */
  final Map<String, List<Long>> doubtful = new HashMap<>();

  RedissonLock(boolean fenced) {
    this.fenced = fenced;
  }

  public static void main(String[] args) throws Exception {
    takeStdout();
    boolean fenced = args.length > 0 && args[0].equals("--fenced");
    serve(new RedissonLock(fenced));
  }

  public void shutdown() {
    RedissonClient c = client;
    client = null;
    if (c != null) {
      try {
        c.shutdown(0, commandTimeoutMs, TimeUnit.MILLISECONDS);
      } catch (Throwable t) {
        log("shutdown: " + shortError(t));
      }
    }
  }

  public Map<String, Object> init(Object id, Map<String, Object> req) {
    Init init = Init.of(req, 6379);
    host = init.host();
    port = init.port();
    ownerPrefix = init.ownerPrefix();
    ttlMs = init.ttlMs();
    commandTimeoutMs = init.commandTimeoutMs();
    log("init: JVM up " + ManagementFactory.getRuntimeMXBean().getUptime() + " ms; " + library() + "; watchdog " + ttlMs + " ms, command timeout " + commandTimeoutMs + " ms");
    return initOk(id, fenced, "automatic", library());
  }

  String library() {
    return "Redisson " + LIBRARY_VERSION + (fenced ? " RFencedLock" : " RLock") + " (Maven Central), watchdog renewal";
  }

  RedissonClient client() {
    if (client == null) {
      long t0 = System.nanoTime();
      Config config = new Config();
      config.setLockWatchdogTimeout(ttlMs);
      config.setThreads(2);
      config.setNettyThreads(2);
      config.useSingleServer()
          .setAddress("redis://" + host + ":" + port)
          .setTimeout(commandTimeoutMs)
          .setConnectTimeout(commandTimeoutMs)
          .setSubscriptionTimeout(commandTimeoutMs)
          .setRetryAttempts(0)
          .setConnectionMinimumIdleSize(1)
          .setConnectionPoolSize(4)
          .setSubscriptionConnectionMinimumIdleSize(1)
          .setSubscriptionConnectionPoolSize(2)
          .setDnsMonitoringInterval(-1);
      client = Redisson.create(config);
      log("Redisson client made in " + (System.nanoTime() - t0) / 1_000_000 + " ms (JVM up " + ManagementFactory.getRuntimeMXBean().getUptime() + " ms)");
    }
    return client;
  }

  /** The lock call, started from a fresh thread whose id becomes the hold's owner in Redis. */
  static final class Started {
    final long threadId;
    final CompletableFuture<Object> result;

    Started(long threadId, CompletableFuture<Object> result) {
      this.threadId = threadId;
      this.result = result;
    }
  }

  Started start(RedissonClient c, String key, long waitMs) throws InterruptedException {
    AtomicReference<Started> got = new AtomicReference<>();
    AtomicReference<Throwable> failed = new AtomicReference<>();
    Thread t = new Thread(() -> {
      try {
        long tid = Thread.currentThread().getId();
        CompletableFuture<Object> f;
        if (fenced) {
          RFencedLock lock = c.getFencedLock(key);
          f = lock.tryLockAndGetTokenAsync(waitMs, -1, TimeUnit.MILLISECONDS).toCompletableFuture().thenApply(x -> (Object) x);
        } else {
          RLock lock = c.getLock(key);
          f = lock.tryLockAsync(waitMs, -1, TimeUnit.MILLISECONDS, tid).toCompletableFuture().thenApply(x -> (Object) x);
        }
        got.set(new Started(tid, f));
      } catch (Throwable e) {
        failed.set(e);
      }
    }, "acquire");
    t.setDaemon(true);
    t.start();
    t.join();
    if (failed.get() != null) throw new RuntimeException(failed.get());
    return got.get();
  }

  /**
   * Unlocks, quietly, what this program may still hold on key: abandoned holds and errored
   * acquires. Returns null, or why one could not be unlocked (it stays doubtful).
   */
  String clearKey(RedissonClient c, String key) {
    List<Long> ids = new ArrayList<>(doubtful.getOrDefault(key, List.of()));
    doubtful.remove(key);
    holds.values().removeIf(h -> {
      if (h.key.equals(key)) {
        ids.add(h.threadId);
        return true;
      }
      return false;
    });
    for (long tid : ids) {
      try {
        lockOf(c, key).unlockAsync(tid).toCompletableFuture().get(commandTimeoutMs, TimeUnit.MILLISECONDS);
        log("released an abandoned hold on " + key + " (thread " + tid + ")");
      } catch (Throwable e) {
        if (!(root(e) instanceof IllegalMonitorStateException)) {
          log("clearing " + key + " (thread " + tid + "): " + shortError(e));
          // Still maybe held (and renewed by the watchdog): try again at the next acquire of key.
          ids.stream().dropWhile(x -> x != tid).forEach(x -> doubtful.computeIfAbsent(key, k -> new ArrayList<>()).add(x));
          return "could not release an earlier hold on " + key + ": " + shortError(e);
        }
      }
    }
    return null;
  }

  RLock lockOf(RedissonClient c, String key) {
    return fenced ? c.getFencedLock(key) : c.getLock(key);
  }

  public Map<String, Object> acquire(Object id, Map<String, Object> req) throws Exception {
    String key = String.valueOf(req.get("key"));
    long waitMs = Json.num(req.get("wait_ms"), 0);
    RedissonClient c;
    try {
      c = client();
    } catch (Throwable e) {
      client = null;
      // Redisson.create() threw: there is no client, so no lock command was sent. Definite.
      log("connect: " + shortError(e));
      return replyWith(id, "fail", "error", "conn-refused");
    }
    // One clearing at most per acquire: its timeout (command_timeout_ms) and the acquire's must fit fencecheck's deadline.
    String unclear = clearKey(c, key);
    if (unclear != null) return replyWith(id, "error", "error", unclear);
    Started s = start(c, key, waitMs);
    Object result;
    try {
      result = s.result.get(waitMs + commandTimeoutMs + commandTimeoutMs / 2, TimeUnit.MILLISECONDS);
    } catch (TimeoutException e) {
      doubtful.computeIfAbsent(key, k -> new ArrayList<>()).add(s.threadId);
      return replyWith(id, "error", "error", "timeout waiting for Redisson");
    } catch (ExecutionException e) {
      doubtful.computeIfAbsent(key, k -> new ArrayList<>()).add(s.threadId);
      return replyWith(id, "error", "error", shortError(e));
    }
    boolean taken = fenced ? result != null : Boolean.TRUE.equals(result);
    if (!taken) return replyWith(id, "fail", "error", waitMs == 0 ? "busy" : "timeout");
    holdCount++;
    String owner = ownerPrefix + "-h" + holdCount;
    holds.put(owner, new Hold(key, s.threadId));
    Map<String, Object> r = reply(id, "ok");
    r.put("owner", owner);
    r.put("fence", fenced ? result : null);
    // Where the fence came from, kept in the history as the other adapters' are.
    if (fenced) r.put("fence_source", "token");
    return r;
  }

  public Map<String, Object> release(Object id, Map<String, Object> req) {
    String owner = String.valueOf(req.get("owner"));
    Hold h = holds.remove(owner);
    if (h == null) return replyWith(id, "fail", "error", "not-owner");
    try {
      lockOf(client(), h.key).unlockAsync(h.threadId).toCompletableFuture().get(2L * commandTimeoutMs - commandTimeoutMs / 4, TimeUnit.MILLISECONDS);
    } catch (Throwable e) {
      if (root(e) instanceof IllegalMonitorStateException) {
        Map<String, Object> r = reply(id, "ok");
        r.put("released", false);
        r.put("lost", "lease-expired");
        return r;
      }
      // Unknown: it may still be held, and renewed; unlock it before the key is taken again.
      doubtful.computeIfAbsent(h.key, k -> new ArrayList<>()).add(h.threadId);
      return replyWith(id, "error", "error", shortError(e));
    }
    Map<String, Object> r = reply(id, "ok");
    r.put("released", true);
    return r;
  }
}
