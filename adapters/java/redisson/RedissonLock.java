// fencecheck's adapter for Redisson's locks (protocol 1, docs/adapter-protocol.md): JSON
// lines on stdin, replies on stdout, logs on stderr. One program per logical client,
// compiled with pom.xml's environment (Redisson and slf4j-simple, to stderr, and
// fencecheck.Protocol and Json); ../jvm.sh execs a small JVM.
//
// Four locks, by argument:
// - none: RLock (redisson.adapter.json, "fences": false). Its kinds: "reentrant" (the
//   same RLock again with the hold's thread id: Redisson HINCRBYs the owner's count; no
//   fence of its own, so fence_on_reentry "same": a counter fence stays the outer's),
//   "rw" (RReadWriteLock's readLock()/writeLock()), "semaphore" (RPermitExpirableSemaphore:
//   trySetPermits(N) once, tryAcquire(wait, leaseTime = ttl) -> a permit id,
//   tryRelease(permitId)) and "cancel".
// - "--fenced": RFencedLock (redisson-fenced.adapter.json, "fences": true, the fence is
//   the token tryLockAndGetToken returns, an INCR in Redis made in the same script as the
//   grant). Its kinds: "reentrant" with fence_on_reentry "new" (its script INCRs the token
//   at every grant, a re-entry's too: read in Redisson 4.7.0's RedissonFencedLock, and
//   proved by test/adapters/redisson-kinds.test.ts) and "cancel". Not "rw" nor "semaphore":
//   Redisson gives no token for them, and a fenced adapter has no null fence.
// - "--multi": RedissonMultiLock (redisson-multilock.adapter.json, backend redlock): one
//   RedissonClient per node (single-server config each), getMultiLock(each client's
//   getLock(key)): granted when every node's lock is. No fence (--fence-source).
// - "--red": RedissonRedLock (redisson-redlock.adapter.json), the same made with
//   getRedLock: granted by a majority of the nodes. @Deprecated in 4.7.0 but still there
//   (Redisson logs "RedLock object is deprecated. Use RLock or RFencedLock object instead.").
//
// As Redisson's documentation says: single-server config to each endpoint init names,
// tryLock(waitTime, leaseTime = -1, MILLISECONDS) so the lock watchdog renews the lease
// every watchdogTimeout / 3 while held, with Config.setLockWatchdogTimeout = the run's
// ttl_ms; unlock() to release, forceUnlock() never. The manifests say "renew": "automatic".
//
// Choices, each for a reason:
// - The clients are made on a thread of their own from init, and init waits for them (at
//   most INIT_WAIT_MS), then answers ok made or not: Redisson.create() connects (and throws
//   when nothing listens), and init must answer whether or not anything listens. Waiting
//   keeps their making out of the run, whose clock starts once every program has answered
//   init (made at the first acquire's invoke they took 1-2.5 s of it on a busy machine, and
//   a hold that waited longer than its TTL is never certainly valid to the checker; made in
//   the background while the run went on, 5-8 s on a loaded one, past scenario L5's cut).
//   When making them threw, the first acquire makes them again; when that throws too there
//   is no client and nothing was sent: fail "conn-refused"; the next acquire tries again.
//   The multi-node locks' five clients are made at once (in turn they took 5-8 s of
//   a busy machine), each with threads of its own (sharing one EventLoopGroup and executor
//   among them left the first acquires unanswered), and lazy (setLazyInitialization): one
//   node down must not keep the others from being asked (RedLock is granted by a majority).
// - Timeout, connect timeout and subscription timeout = command_timeout_ms; retryAttempts 0:
//   a lock script retried after it ran would re-enter (HINCRBY twice) and leave the lock
//   held by one count after the release. With no retry a timed-out command is an error.
// - One connection for the single-node locks (connectionPoolSize 1): Redis runs one
//   connection's commands in the order they were written, so a check written after a
//   cancel runs after any lock script the withdrawn wait had sent (below). The multi-node
//   locks do not cancel and keep a pool of four.
// - A Redisson lock is owned by a thread id (the hash field is "<client uuid>:<thread id>"),
//   so each hold is made on a thread of its own (a one-thread executor kept while the hold
//   lives), whose id (never reused in a JVM) becomes the hold's: two holds of this program
//   are never one re-entered hold. A "reenter" runs on the hold's thread: RLock is given
//   its id (tryLockAsync(..., threadId)), RFencedLock's tryLockAndGetTokenAsync takes the
//   calling thread's and has no such argument. A re-entry after the lease ended finds
//   the hash gone and is granted anew, count 1, as Redisson grants its users: kept, so
//   the checker sees what a user's re-entry would do.
// - A hold the workload abandoned (after an unknown outcome the new logical process never
//   releases the old one) would be renewed by the watchdog forever: before acquiring a key,
//   every earlier hold and every errored acquire of this program on that key is unlocked
//   until Redisson says it is not held (quietly; IllegalMonitorStateException). One that
//   cannot be (a timeout: the connection is bad) stays on the list and the acquire answers
//   error without trying. The clearing gets command_timeout_ms at most and the lock call
//   the rest of fencecheck's deadline (wait_ms + 2 x command_timeout_ms): a multi-node
//   lock's unlock waits out a dead node, and the program was killed for adapter-timeout.
//   A permit needs none of this: its lease is never renewed, it ends by itself.
// - tryLock false: the last attempt's script answered that another owner holds it, so
//   "timeout" (or "busy" for wait_ms 0) is definite. An exception or a timed-out future:
//   error. A permit id of null is the same for a semaphore.
// - Cancel: requests are read on a thread of their own (fencecheck.Protocol's
//   serveCancellable, as the Curator adapter's); a cancel cancels the lock call's future,
//   which Redisson checks before each retry and, should a grant come after it, unlocks.
//   Then, on the same connection, the lock's hash is asked twice (50 ms apart, for a retry
//   that raced the cancel) whether this thread id holds it: neither time: fail "cancelled";
//   held: it was granted as the cancel came, Redisson gives it back, and the answer is error
//   "cancel-unknown" (so too when it cannot be read). A permit's id is made by Redisson and
//   known only from the grant, so a withdrawn semaphore wait cannot be looked for: error
//   "cancel-unknown" (its lease ends it within ttl_ms). The multi-node locks do not cancel:
//   each node's lock is taken in turn, and a check cannot follow the order of five.
// - release: IllegalMonitorStateException (the hash field is gone: the lease ended) is
//   ok released:false; tryRelease false (the permit expired) too; other exceptions are
//   errors. A re-entered hold's release counts one down (Redisson's HINCRBY -1); the last
//   frees it.
// - A permit's lease is ttl_ms and never renewed (RPermitExpirableSemaphore has no
//   watchdog): a permit held longer than ttl_ms ends in Redis while the workload holds it,
//   as it would for a Redisson user.
// - Not done: "lost" notices. Redisson's watchdog logs a failed renewal and stops, but
//   tells its user nothing; a pause longer than the watchdog timeout lets the lease expire
//   in Redis while this JVM, frozen with it, still believes it holds.
import static fencecheck.Protocol.*;

import fencecheck.Json;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;

import org.redisson.Redisson;
import org.redisson.api.RLock;
import org.redisson.api.RPermitExpirableSemaphore;
import org.redisson.api.RReadWriteLock;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

public final class RedissonLock implements CancellableHandler {
  static final String LIBRARY_VERSION = jarVersion("redisson");
  /** How long init waits for the clients: well inside the 30 s fencecheck gives init. */
  static final long INIT_WAIT_MS = 20_000;

  /** Which of Redisson's locks this program is, by its argument. */
  enum Lock {
    PLAIN("RLock, RReadWriteLock, RPermitExpirableSemaphore", false, Map.of("reentrant", Map.of("fence_on_reentry", "same"), "rw", true, "semaphore", true, "cancel", true)),
    FENCED("RFencedLock", true, Map.of("reentrant", Map.of("fence_on_reentry", "new"), "cancel", true)),
    MULTI("RedissonMultiLock", false, Map.of()),
    RED("RedissonRedLock (deprecated)", false, Map.of());

    final String names;
    final boolean fenced;
    /** The lock kinds it offers, as its manifest says them. */
    final Map<String, Object> kinds;

    Lock(String names, boolean fenced, Map<String, Object> kinds) {
      this.names = names;
      this.fenced = fenced;
      this.kinds = kinds;
    }

    boolean multiNode() {
      return this == MULTI || this == RED;
    }
  }

  static void log(String s) {
    System.err.println("[redisson-adapter] " + s);
    System.err.flush();
  }

  static Throwable root(Throwable t) {
    while ((t instanceof ExecutionException || t instanceof java.util.concurrent.CompletionException) && t.getCause() != null) t = t.getCause();
    return t;
  }

  /**
   * A thread of its own for a hold: its id is the hold's owner in Redis. Kept while the
   * hold lives, so that a re-entry runs on it (RFencedLock takes the calling thread's id).
   */
  static final class Owner {
    final ExecutorService exec;
    final long threadId;

    Owner() throws Exception {
      exec = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "hold");
        t.setDaemon(true);
        return t;
      });
      threadId = exec.submit(() -> Thread.currentThread().getId()).get();
    }

    /** Starts a lock call on this thread (it returns at once: the call is asynchronous). */
    <T> CompletableFuture<T> start(Supplier<CompletableFuture<T>> call) throws Exception {
      return exec.submit(call::get).get();
    }

    void end() {
      exec.shutdown();
    }
  }

  /** A hold: its key, what kind ("lock", "read", "write" or "permit"), its thread, its permit, its entries. */
  static final class Hold {
    final String key, kind, owner, permitId;
    final Owner thread;
    int entries = 1;

    Hold(String key, String kind, String owner, Owner thread, String permitId) {
      this.key = key;
      this.kind = kind;
      this.owner = owner;
      this.thread = thread;
      this.permitId = permitId;
    }
  }

  /** A lock this program may still hold, by thread id, to be unlocked before its key is acquired again. */
  record Doubt(String kind, long threadId) {}

  final Lock lock;
  final Cancels cancels = new Cancels();
  List<RedissonClient> clients;
  /** The clients being made in the background since init, or null. */
  CompletableFuture<List<RedissonClient>> making;
  List<String> addresses = List.of();
  String ownerPrefix = "c";
  long ttlMs = 30000;
  int commandTimeoutMs = 3000;
  int holdCount = 0;
  final Map<String, Hold> holds = new HashMap<>();
  /** Locks of acquires answered error, and holds whose release was, by key. */
  final Map<String, List<Doubt>> doubtful = new HashMap<>();
  /** Semaphores whose permits this program has set (trySetPermits: once). */
  final Set<String> permitsSet = new HashSet<>();

  RedissonLock(Lock lock) {
    this.lock = lock;
  }

  public static void main(String[] args) throws Exception {
    takeStdout();
    String arg = args.length > 0 ? args[0] : "";
    Lock lock = switch (arg) {
      case "" -> Lock.PLAIN;
      case "--fenced" -> Lock.FENCED;
      case "--multi" -> Lock.MULTI;
      case "--red" -> Lock.RED;
      default -> {
        System.err.println("RedissonLock: unknown argument " + arg + " (none, --fenced, --multi or --red)");
        System.exit(254);
        yield null;
      }
    };
    RedissonLock h = new RedissonLock(lock);
    if (lock.kinds.containsKey("cancel")) serveCancellable(h);
    else serve(h);
  }

  public Cancels cancels() {
    return cancels;
  }

  public void shutdown() {
    List<RedissonClient> cs = clients;
    clients = null;
    if (cs == null && making != null && making.isDone() && !making.isCompletedExceptionally()) cs = making.join();
    if (cs == null) return;
    for (RedissonClient c : cs) {
      try {
        c.shutdown(0, commandTimeoutMs, TimeUnit.MILLISECONDS);
      } catch (Throwable t) {
        log("shutdown: " + shortError(t));
      }
    }
  }

  public Map<String, Object> init(Object id, Map<String, Object> req) {
    Init init = Init.of(req, 6379);
    addresses = addresses(req, 6379);
    ownerPrefix = init.ownerPrefix();
    ttlMs = init.ttlMs();
    commandTimeoutMs = init.commandTimeoutMs();
    log("init: JVM up " + ManagementFactory.getRuntimeMXBean().getUptime() + " ms; " + library() + "; " + addresses.size() + " node(s); watchdog " + ttlMs + " ms, command timeout " + commandTimeoutMs + " ms");
    // Made on a thread of their own and waited for, a bounded time (the header says why).
    making = CompletableFuture.supplyAsync(this::makeClients, r -> {
      Thread t = new Thread(r, "redisson-clients");
      t.setDaemon(true);
      t.start();
    });
    try {
      making.get(INIT_WAIT_MS, TimeUnit.MILLISECONDS);
    } catch (ExecutionException e) {
      // The first acquire makes them again (clients()) and answers for it.
      log("clients not made at init: " + shortError(e.getCause()));
    } catch (TimeoutException | InterruptedException e) {
      log("clients still being made after " + INIT_WAIT_MS + " ms: init answers now");
    }
    return initOk(id, lock.fenced, "automatic", library(), lock.kinds);
  }

  String library() {
    return "Redisson " + LIBRARY_VERSION + " " + lock.names + " (Maven Central), watchdog renewal";
  }

  /** The clients, one per endpoint: made in the background from init, or now (again, after a failure). */
  List<RedissonClient> clients() {
    if (clients == null) {
      CompletableFuture<List<RedissonClient>> early = making;
      making = null;
      if (early != null) {
        try {
          clients = early.join();
        } catch (RuntimeException e) {
          // Nothing listened then: try again now, and say so as this acquire's (conn-refused when it fails too).
          log("clients made at init: " + shortError(e));
        }
      }
      if (clients == null) clients = makeClients();
    }
    return clients;
  }

  List<RedissonClient> makeClients() {
    long t0 = System.nanoTime();
    // One per node, all at once: five made in turn took 5-6 s of a busy machine's first acquire.
    List<CompletableFuture<RedissonClient>> making = addresses.stream().map(a -> CompletableFuture.supplyAsync(() -> Redisson.create(config(a)), r -> {
      Thread t = new Thread(r, "redisson-client");
      t.setDaemon(true);
      t.start();
    })).toList();
    List<RedissonClient> made = new ArrayList<>();
    RuntimeException failed = null;
    for (CompletableFuture<RedissonClient> f : making) {
      try {
        made.add(f.join());
      } catch (RuntimeException e) {
        failed = e;
      }
    }
    if (failed != null) {
      for (RedissonClient c : made) c.shutdown(0, commandTimeoutMs, TimeUnit.MILLISECONDS);
      throw failed;
    }
    log(made.size() + " Redisson client(s) made in " + (System.nanoTime() - t0) / 1_000_000 + " ms (JVM up " + ManagementFactory.getRuntimeMXBean().getUptime() + " ms)");
    return made;
  }

  Config config(String address) {
    Config config = new Config();
    config.setLockWatchdogTimeout(ttlMs);
    config.setThreads(2);
    config.setNettyThreads(2);
    config.setLazyInitialization(lock.multiNode());
    config.useSingleServer()
        .setAddress("redis://" + address)
        .setTimeout(commandTimeoutMs)
        .setConnectTimeout(commandTimeoutMs)
        .setSubscriptionTimeout(commandTimeoutMs)
        .setRetryAttempts(0)
        .setConnectionMinimumIdleSize(1)
        // One connection where a cancel's check must follow the lock script (below); the multi-node
        // locks, which do not cancel, keep the four this adapter always had.
        .setConnectionPoolSize(lock.kinds.containsKey("cancel") ? 1 : 4)
        .setSubscriptionConnectionMinimumIdleSize(1)
        .setSubscriptionConnectionPoolSize(2)
        .setDnsMonitoringInterval(-1);
    return config;
  }

  /** The lock of a key and kind ("lock", "read", "write"), as this program's Lock makes it. */
  RLock lockOf(String key, String kind) {
    List<RedissonClient> cs = clients();
    RedissonClient c = cs.get(0);
    if (kind.equals("read") || kind.equals("write")) {
      RReadWriteLock rw = c.getReadWriteLock(key);
      return kind.equals("read") ? rw.readLock() : rw.writeLock();
    }
    switch (lock) {
      case FENCED: return c.getFencedLock(key);
      case MULTI:
      case RED: {
        RLock[] each = cs.stream().map(n -> n.getLock(key)).toArray(RLock[]::new);
        // getRedLock is deprecated in Redisson 4, and is what its users of RedLock call.
        @SuppressWarnings("deprecation")
        RLock l = lock == Lock.RED ? c.getRedLock(each) : c.getMultiLock(each);
        return l;
      }
      default: return c.getLock(key);
    }
  }

  /** The lock call of a new hold or a re-entry, on its thread: tryLock, or for RFencedLock tryLockAndGetToken. */
  // Redisson's own future, not one derived from it (thenApply): a cancel must reach the one Redisson checks.
  CompletableFuture<?> tryLock(Owner thread, RLock l, long waitMs) throws Exception {
    if (l instanceof org.redisson.api.RFencedLock f) {
      return thread.start(() -> f.tryLockAndGetTokenAsync(waitMs, -1, TimeUnit.MILLISECONDS).toCompletableFuture());
    }
    return thread.start(() -> l.tryLockAsync(waitMs, -1, TimeUnit.MILLISECONDS, thread.threadId).toCompletableFuture());
  }

  void doubt(String key, String kind, long threadId) {
    doubtful.computeIfAbsent(key, k -> new ArrayList<>()).add(new Doubt(kind, threadId));
  }

  /** The ms left until `deadline` (System.nanoTime()), at least 1. */
  static long leftMs(long deadline) {
    return Math.max(1, (deadline - System.nanoTime()) / 1_000_000);
  }

  /** Unlocks a thread's lock until Redisson says it does not hold it (a re-entered hold: once per entry), by `deadline`. */
  void unlockAll(RLock l, long threadId, long deadline) throws Exception {
    for (int i = 0; i < 64; i++) {
      try {
        l.unlockAsync(threadId).toCompletableFuture().get(leftMs(deadline), TimeUnit.MILLISECONDS);
      } catch (ExecutionException e) {
        if (root(e) instanceof IllegalMonitorStateException) return;
        throw e;
      }
    }
  }

  /**
   * Unlocks, quietly, what this program may still hold on key: abandoned holds and errored
   * acquires, all by `deadline`. Returns null, or why one could not be unlocked (it stays doubtful).
   */
  String clearKey(String key, long deadline) {
    List<Doubt> doubts = new ArrayList<>(doubtful.getOrDefault(key, List.of()));
    doubtful.remove(key);
    List<Hold> abandoned = new ArrayList<>();
    holds.values().removeIf(h -> h.key.equals(key) && abandoned.add(h));
    for (Hold h : abandoned) {
      h.thread.end();
      if (h.permitId != null) {
        try {
          clients().get(0).getPermitExpirableSemaphore(key).tryReleaseAsync(h.permitId).toCompletableFuture().get(leftMs(deadline), TimeUnit.MILLISECONDS);
        } catch (Throwable e) {
          // Its lease (ttl_ms, never renewed) ends it.
          log("clearing permit " + h.permitId + " on " + key + ": " + shortError(e));
        }
      } else {
        doubts.add(new Doubt(h.kind, h.thread.threadId));
      }
    }
    for (int i = 0; i < doubts.size(); i++) {
      Doubt d = doubts.get(i);
      try {
        unlockAll(lockOf(key, d.kind()), d.threadId(), deadline);
        log("released an abandoned " + d.kind() + " on " + key + " (thread " + d.threadId() + ")");
      } catch (Throwable e) {
        log("clearing " + key + " (thread " + d.threadId() + "): " + shortError(e));
        // Still maybe held (and renewed by the watchdog): try again at the next acquire of key.
        doubtful.computeIfAbsent(key, k -> new ArrayList<>()).addAll(doubts.subList(i, doubts.size()));
        return "could not release an earlier hold on " + key + ": " + shortError(e);
      }
    }
    return null;
  }

  public Map<String, Object> acquire(Object id, Map<String, Object> req) throws Exception {
    String key = String.valueOf(req.get("key"));
    long waitMs = Math.max(0, Json.num(req.get("wait_ms"), 0));
    Object mode = req.get("mode");
    Object reenter = req.get("reenter");
    Object permits = req.get("permits");
    // fencecheck waits wait_ms + 2 x command_timeout_ms for the answer: the clearing and the lock call share it.
    long answerBy = System.nanoTime() + (waitMs + 2L * commandTimeoutMs - 250) * 1_000_000L;
    if (mode != null && !"read".equals(mode) && !"write".equals(mode)) return replyWith(id, "error", "error", "unknown mode " + mode);
    try {
      clients();
    } catch (Throwable e) {
      clients = null;
      // Redisson.create() threw: there is no client, so no lock command was sent. Definite.
      log("connect: " + shortError(e));
      return replyWith(id, "fail", "error", "conn-refused");
    }
    if (reenter != null) return reenter(id, key, String.valueOf(reenter));
    // The clearing gets command_timeout_ms at most (a multi-node lock's unlock waits out a dead node's), the lock call the rest.
    String unclear = clearKey(key, System.nanoTime() + commandTimeoutMs * 1_000_000L);
    if (unclear != null) return replyWith(id, "error", "error", unclear);
    // Every acquire's owner is its own, a cancelled or failed one's too: an owner names one hold in the whole run.
    String owner = ownerPrefix + "-h" + (++holdCount);
    String kind = permits != null ? "permit" : mode != null ? String.valueOf(mode) : "lock";
    Owner thread = new Owner();
    RLock l = kind.equals("permit") ? null : lockOf(key, kind);
    RPermitExpirableSemaphore sem = null;
    if (l == null) {
      sem = clients().get(0).getPermitExpirableSemaphore(key);
      if (!permitsSet.contains(key)) {
        int n = (int) Json.num(permits, 1);
        try {
          // false: another program set it first (every acquire of a run asks the same N).
          sem.trySetPermitsAsync(n).toCompletableFuture().get(commandTimeoutMs, TimeUnit.MILLISECONDS);
          permitsSet.add(key);
        } catch (Throwable e) {
          thread.end();
          return replyWith(id, "error", "error", "trySetPermits: " + shortError(e));
        }
      }
    }
    final RPermitExpirableSemaphore semaphore = sem;
    AtomicReference<CompletableFuture<?>> started = new AtomicReference<>();
    Runnable withdraw = () -> {
      CompletableFuture<?> f = started.get();
      if (f != null) f.cancel(false);
    };
    long t0 = System.nanoTime();
    Object result;
    try {
      result = cancels.during(id, withdraw, () -> {
        CompletableFuture<?> f = semaphore != null
            ? thread.start(() -> semaphore.tryAcquireAsync(waitMs, ttlMs, TimeUnit.MILLISECONDS).toCompletableFuture())
            : tryLock(thread, l, waitMs);
        started.set(f);
        // A cancel that came between the check in during() and now found no future to cancel.
        if (cancels.asked(id)) f.cancel(false);
        return (Object) f.get(Math.min(waitMs + commandTimeoutMs + commandTimeoutMs / 2, leftMs(answerBy)), TimeUnit.MILLISECONDS);
      });
    } catch (NotSent e) {
      thread.end();
      return replyWith(replyWith(id, "fail", "error", "cancelled"), "owner", owner);
    } catch (CancellationException e) {
      return withdrawn(id, key, kind, owner, thread, answerBy);
    } catch (TimeoutException | ExecutionException e) {
      thread.end();
      if (l != null) doubt(key, kind, thread.threadId);
      return replyWith(id, "error", "error", e instanceof TimeoutException ? "timeout waiting for Redisson" : shortError(e));
    }
    boolean taken = semaphore != null || lock.fenced ? result != null : Boolean.TRUE.equals(result);
    if (!taken) {
      thread.end();
      return replyWith(id, "fail", "error", waitMs == 0 ? "busy" : "timeout");
    }
    String permitId = semaphore != null ? (String) result : null;
    holds.put(owner, new Hold(key, kind, owner, thread, permitId));
    Map<String, Object> r = reply(id, "ok");
    r.put("owner", owner);
    r.put("fence", lock.fenced ? result : null);
    // Where the fence came from, kept in the history as the other adapters' are.
    if (lock.fenced) r.put("fence_source", "token");
    if (permitId != null) r.put("permit", permitId);
    r.put("queued_ms", (System.nanoTime() - t0) / 1_000_000);
    return r;
  }

  /**
   * The answer for an acquire whose cancel cancelled its lock call. Redisson stops retrying
   * and unlocks a grant that lands after; the lock's hash is asked, on the connection the
   * lock script went by, whether this thread holds it, twice (a retry may have raced the
   * cancel). Neither time: fail "cancelled". Otherwise, or unreadable, error "cancel-unknown".
   */
  Map<String, Object> withdrawn(Object id, String key, String kind, String owner, Owner thread, long answerBy) {
    thread.end();
    if (kind.equals("permit")) {
      // Redisson makes a permit's id and says it only with the grant: nothing to look for.
      return replyWith(replyWith(id, "error", "error", "cancel-unknown"), "detail", "a withdrawn permit's id is not known; its lease ends it");
    }
    RLock l = lockOf(key, kind);
    String why = null;
    try {
      for (int i = 0; i < 2 && why == null; i++) {
        if (i > 0) Thread.sleep(50);
        if (l.isHeldByThreadAsync(thread.threadId).toCompletableFuture().get(Math.min(commandTimeoutMs, leftMs(answerBy)), TimeUnit.MILLISECONDS)) why = "granted as the cancel came";
      }
    } catch (Throwable e) {
      why = "its lock is unreadable: " + shortError(e);
    }
    if (why == null) return replyWith(replyWith(id, "fail", "error", "cancelled"), "owner", owner);
    // Redisson gives a late grant back itself; unlock it too, before the key is taken again.
    doubt(key, kind, thread.threadId);
    return replyWith(replyWith(id, "error", "error", "cancel-unknown"), "detail", why);
  }

  /**
   * A re-entry of the hold `owner` has on `key`: its lock again on the hold's thread, which
   * Redisson grants by counting (HINCRBY on the owner's field). RLock: no fence; RFencedLock:
   * a new token (its script INCRs the token at every grant).
   */
  Map<String, Object> reenter(Object id, String key, String owner) throws Exception {
    Hold h = holds.get(owner);
    // Nothing sent: this program has no such hold, or not of a mutex.
    if (h == null || !h.key.equals(key) || !h.kind.equals("lock")) return replyWith(id, "fail", "error", "not-owner");
    Object result;
    try {
      result = tryLock(h.thread, lockOf(key, "lock"), 0).get(commandTimeoutMs + commandTimeoutMs / 2, TimeUnit.MILLISECONDS);
    } catch (TimeoutException | ExecutionException e) {
      // Maybe counted once more: the hold is abandoned (no release follows an unknown outcome); the next acquire unlocks it, every entry.
      return replyWith(id, "error", "error", e instanceof TimeoutException ? "timeout waiting for Redisson" : shortError(e));
    }
    boolean taken = lock.fenced ? result != null : Boolean.TRUE.equals(result);
    // Another owner holds it now: our lease had ended.
    if (!taken) return replyWith(id, "fail", "error", "busy");
    h.entries++;
    Map<String, Object> r = reply(id, "ok");
    r.put("owner", h.owner);
    r.put("fence", lock.fenced ? result : null);
    if (lock.fenced) r.put("fence_source", "token");
    r.put("entries", h.entries);
    return r;
  }

  public Map<String, Object> release(Object id, Map<String, Object> req) {
    String owner = String.valueOf(req.get("owner"));
    Hold h = holds.get(owner);
    if (h == null) return replyWith(id, "fail", "error", "not-owner");
    long deadline = 2L * commandTimeoutMs - commandTimeoutMs / 4;
    try {
      if (h.permitId != null) {
        holds.remove(owner);
        h.thread.end();
        boolean released = clients().get(0).getPermitExpirableSemaphore(h.key).tryReleaseAsync(h.permitId).toCompletableFuture().get(deadline, TimeUnit.MILLISECONDS);
        if (!released) return replyWith(replyWith(id, "ok", "released", false), "lost", "lease-expired");
        return replyWith(id, "ok", "released", true);
      }
      lockOf(h.key, h.kind).unlockAsync(h.thread.threadId).toCompletableFuture().get(deadline, TimeUnit.MILLISECONDS);
    } catch (Throwable e) {
      if (root(e) instanceof IllegalMonitorStateException) {
        holds.remove(owner);
        h.thread.end();
        return replyWith(replyWith(id, "ok", "released", false), "lost", "lease-expired");
      }
      if (h.permitId == null) {
        // Unknown: it may still be held, and renewed; unlock it before the key is taken again.
        holds.remove(owner);
        h.thread.end();
        doubt(h.key, h.kind, h.thread.threadId);
      }
      return replyWith(id, "error", "error", shortError(e));
    }
    h.entries--;
    if (h.entries > 0) return replyWith(replyWith(id, "ok", "released", true), "entries", h.entries);
    holds.remove(owner);
    h.thread.end();
    return replyWith(id, "ok", "released", true);
  }
}
