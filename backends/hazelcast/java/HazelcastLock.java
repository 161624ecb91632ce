// fencecheck's adapter for Hazelcast's FencedLock (protocol 1, docs/adapter-protocol.md):
// JSON lines on stdin, replies on stdout, logs on stderr. One program per logical
// client: a Hazelcast 5.4 Java client (from Maven Central, pom.xml beside it) connected
// to the run's members through this worker's links, and cp.getLock(key) as Hazelcast's
// documentation shows it: tryLockAndGetFence(wait, MILLISECONDS) to acquire, the
// fence it returns as the hold's fence, unlock() to release. A hold lives on the
// client's CP session (its TTL and heartbeat are the members' config, from --ttl):
// the manifest says "renew": "none".
//
// Choices, each for a reason:
// - A FencedLock is owned by a CP session and a thread: the same thread locking again
//   re-enters (the same fence), and unlock() must come from the owning thread. So each
//   hold gets a thread of its own (a single-thread executor), which takes it, re-enters
//   it ("reenter") and unlocks it; two holds of this program are never one re-entered
//   hold, and a release is made by the thread that holds.
// - Unisocket (smart routing off): the members advertise host names (hz-1, ...) that
//   only they resolve, to the links between them; this client reaches them only
//   through the addresses init gives (its worker's links), so it keeps one connection,
//   to one of them, and on losing it tries the given addresses again, never the member
//   list's.
// - Started asynchronously, reconnecting asynchronously and never giving up: an
//   operation while disconnected throws HazelcastClientOfflineException at once, and
//   was not sent, so it is a definite fail ("offline"). The client is made in the
//   background from init on (making it loads classes for seconds on a busy machine,
//   which the first acquire would otherwise pay inside its deadline); init answers
//   without waiting for it or for a connection, and an acquire waits for the first
//   connection within its own deadline (fencecheck's: wait_ms + 2 x command_timeout_ms).
// - Invocation timeout and connection heartbeat timeout from command_timeout_ms, so a
//   silent link (a partition that drops data) ends an operation as an error in about
//   that time, not after the defaults' 120 s and 60 s.
// - A hold the workload abandoned (after an unknown outcome the new logical process
//   never releases the old one) would keep the key locked for the whole life of this
//   program's CP session, which its heartbeats keep alive: before acquiring a key, each
//   earlier hold of this program on it, and each acquire on it that ended in an error,
//   is unlocked by its own thread, every entry, quietly (IllegalMonitorStateException:
//   it was not held). One that cannot be (a timeout) stays, and the acquire answers
//   error without trying.
// - tryLockAndGetFence returned INVALID_FENCE: the CP group answered that another owner
//   holds it for the whole wait: "timeout" (or "busy" for wait_ms 0), definite.
// - release: LockOwnershipLostException (the session that held it has ended: a pause
//   longer than its TTL) is ok released:false lost:"session-expired"; another
//   IllegalMonitorStateException is ok released:false; anything else is an error.
// - Notices: Hazelcast 5.4's client tells its user nothing when a CP session ends. Its
//   CPSubsystem has listeners for CP membership and CP group availability only; the
//   session manager's heartbeat drops an expired session silently, and the loss shows
//   only to the next call of the owning thread on that lock: isLockedByCurrentThread(),
//   getFence(), tryLock or unlock throw LockOwnershipLostException ("its Session[N] is
//   closed by server"). A watcher polling isLockedByCurrentThread() would be a notice
//   Hazelcast's user does not get, so there is none; a `lost` notice is sent only when
//   a call this adapter makes anyway answers LockOwnershipLostException while the hold
//   is still the workload's: a re-entry ("reenter", then fail not-owner), or the
//   clearing of an abandoned hold before its key is taken again. A plain mutex hold is
//   told lost only at its release (released:false lost:"session-expired").
//
// With the argument "semaphore" (manifest hazelcast-semaphore.adapter.json) this program
// is Hazelcast's CP ISemaphore instead: cp.getSemaphore(key), init(permits) once per key
// (false when another client initialized it first; a run uses one N), tryAcquire(wait)
// for a hold of one permit, release() to give it back. An acquire without "permits" (a
// mutex run) is a semaphore of 1. Choices, each for a reason:
// - The CP ISemaphore is session-aware unless jdk-compatible is configured (the members
//   leave it off): the permits a client acquires belong to its CP session, are given
//   back when that session ends (a pause longer than the TTL), and a later release()
//   by the same client throws IllegalStateException ("No valid session!"). That session
//   is the lease, as FencedLock's: "renew": "none". Probed with Hazelcast 5.4.0:
//   SessionAwareSemaphoreProxy; init(2) twice gives true then false; two tryAcquire of
//   one client, a third client's tryAcquire(500 ms) false after 506 ms; a release from
//   a thread that did not acquire works (permits are the session's, not a thread's); a
//   release beyond what the session holds throws IllegalStateException "Could not
//   release 1 permits ... the caller has acquired less than 1 permits"; a session
//   force-closed on the members gives its permits back at once.
// - No fence: ISemaphore issues none, and a number this adapter took after the grant
//   (an IAtomicLong) would not be ordered with the grants and would be the adapter's,
//   not Hazelcast's. "fences": false, and the backend has no fence counter, so these
//   holds run with --fence off only (docs/adapter-protocol.md, "A lock that issues no
//   fences").
// - Permits are counted per session, not per hold: a release frees one permit of the
//   client's current session, whichever hold took it. So an abandoned hold or an acquire
//   that answered error (maybe granted) is given back, one release() each, before the
//   key is acquired again, stopping at the first "acquired less than" (the session has
//   no more); each program holds at most one live hold, so these are all abandoned.
// - release: IllegalStateException for no valid session (or a SessionExpiredException
//   under it): ok released:false lost:"session-expired"; "acquired less than": ok
//   released:false (the permit is not this session's: its session ended and a new one
//   was made since); offline: fail; anything else: error.
import static fencecheck.Protocol.*;

import com.hazelcast.client.HazelcastClient;
import com.hazelcast.client.HazelcastClientOfflineException;
import com.hazelcast.client.config.ClientConfig;
import com.hazelcast.client.config.ClientConnectionStrategyConfig;
import com.hazelcast.client.config.ConnectionRetryConfig;
import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.core.LifecycleEvent;
import com.hazelcast.cp.ISemaphore;
import com.hazelcast.cp.internal.session.SessionExpiredException;
import com.hazelcast.cp.lock.FencedLock;
import com.hazelcast.cp.lock.exception.LockOwnershipLostException;
import fencecheck.Json;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Set;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.logging.Level;
import java.util.logging.Logger;

public final class HazelcastLock implements LockHandler {
  static final String LIBRARY_VERSION = jarVersion("hazelcast");
  /** Kept: java.util.logging holds its loggers weakly, and a collected one forgets its level. */
  static final Logger HAZELCAST_LOG = Logger.getLogger("com.hazelcast");

  static void log(String s) {
    System.err.println("[hazelcast-adapter] " + s);
    System.err.flush();
  }

  /** A hold, or an acquire whose outcome is unknown: the key, and the thread that owns it in Hazelcast. */
  static final class Hold {
    final String key;
    final ExecutorService thread;
    String owner;
    long fence;
    int entries;
    /** Its ok has been sent and no lost notice yet: a lost notice may name it. */
    boolean announced;

    Hold(String key) {
      this.key = key;
      this.thread = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "hold-" + key);
        t.setDaemon(true);
        return t;
      });
    }
  }

  volatile HazelcastInstance client;
  /** The client, made in the background from init on (HazelcastClient.newHazelcastClient takes seconds of class loading on a busy machine). */
  final java.util.concurrent.CompletableFuture<HazelcastInstance> made = new java.util.concurrent.CompletableFuture<>();
  final CountDownLatch connected = new CountDownLatch(1);
  List<String> addresses = new ArrayList<>();
  String cluster = "fencecheck";
  String ownerPrefix = "c";
  int commandTimeoutMs = 3000;
  int holdCount = 0;
  final Map<String, Hold> holds = new HashMap<>();
  /** Acquires and releases answered error, by key: maybe held, to be unlocked before the key is acquired again. */
  final Map<String, List<Hold>> doubtful = new HashMap<>();
  /** ISemaphore instead of FencedLock (the argument "semaphore"). */
  final boolean semaphore;
  /** Semaphore mode: the keys this program has called init(permits) on. */
  final Set<String> initialized = new HashSet<>();
  /** Semaphore mode: permits this program may still have on a key, of holds abandoned or acquires answered error. */
  final Map<String, Integer> owed = new HashMap<>();
  /** Semaphore mode: the calls, each on a thread of a pool (a timed-out call keeps its thread; the next takes another). */
  final ExecutorService calls = Executors.newCachedThreadPool(r -> {
    Thread t = new Thread(r, "semaphore-call");
    t.setDaemon(true);
    return t;
  });

  HazelcastLock(boolean semaphore) {
    this.semaphore = semaphore;
  }

  public static void main(String[] args) throws Exception {
    takeStdout();
    System.setProperty("java.util.logging.SimpleFormatter.format", "%1$tT.%1$tL %4$s %3$s %5$s%6$s%n");
    HAZELCAST_LOG.setLevel(Level.parse(System.getenv().getOrDefault("FENCECHECK_HAZELCAST_LOG_LEVEL", "WARNING")));
    new HazelcastLock(List.of(args).contains("semaphore")).run();
  }

  void run() throws Exception {
    serve(this);
  }

  /** What an ExecutionException or CompletionException wraps, all the way down: the exception to tell by its class. */
  static Throwable root(Throwable t) {
    while ((t instanceof ExecutionException || t instanceof java.util.concurrent.CompletionException) && t.getCause() != null) t = t.getCause();
    return t;
  }

  public void shutdown() {
    HazelcastInstance c = made.getNow(null);
    client = null;
    if (c != null) {
      try {
        c.shutdown();
      } catch (Throwable t) {
        log("shutdown: " + shortError(t));
      }
    }
  }

  public Map<String, Object> init(Object id, Map<String, Object> req) {
    @SuppressWarnings("unchecked")
    List<Object> endpoints = (List<Object>) req.get("endpoints");
    for (Object o : endpoints) {
      @SuppressWarnings("unchecked")
      Map<String, Object> ep = (Map<String, Object>) o;
      addresses.add(ep.get("host") + ":" + Json.num(ep.get("port"), 5701));
    }
    cluster = System.getenv().getOrDefault("FENCECHECK_HAZELCAST_CLUSTER", "fencecheck");
    ownerPrefix = String.valueOf(req.getOrDefault("owner_prefix", "c"));
    commandTimeoutMs = (int) Json.num(req.get("command_timeout_ms"), 3000);
    log("init: JVM up " + ManagementFactory.getRuntimeMXBean().getUptime() + " ms; " + library() + "; members " + addresses + ", command timeout " + commandTimeoutMs + " ms");
    // Made in the background, not connected to from here: asyncStart returns at once and
    // connects on its own threads, so init answers without waiting for a connection.
    Thread maker = new Thread(() -> {
      try {
        made.complete(client());
      } catch (Throwable t) {
        log("making the client: " + shortError(t));
        made.completeExceptionally(t);
      }
    }, "client-maker");
    maker.setDaemon(true);
    maker.start();
    return initOk(id, !semaphore, "none", library());
  }

  String library() {
    return "Hazelcast " + LIBRARY_VERSION + (semaphore ? " ISemaphore" : " FencedLock") + " (Java client, CP Subsystem)";
  }

  /** A lost notice for a hold the library said is gone (LockOwnershipLostException), once, and only for a hold whose ok was sent. */
  static void toldLost(Hold h) {
    if (h.owner == null || !h.announced) return;
    h.announced = false;
    sendLost(h.key, h.owner);
    log("lost: " + h.owner + " on " + h.key + " (LockOwnershipLostException: its CP session was closed)");
  }

  synchronized HazelcastInstance client() {
    if (client == null) {
      long t0 = System.nanoTime();
      ClientConfig cc = new ClientConfig();
      cc.setClusterName(cluster);
      cc.setProperty("hazelcast.logging.type", "jdk");
      cc.setProperty("hazelcast.phone.home.enabled", "false");
      cc.setProperty("hazelcast.client.invocation.timeout.seconds", String.valueOf(Math.max(1, (commandTimeoutMs + 999) / 1000)));
      cc.setProperty("hazelcast.client.heartbeat.interval", "1000");
      cc.setProperty("hazelcast.client.heartbeat.timeout", String.valueOf(Math.max(2000, commandTimeoutMs)));
      cc.getNetworkConfig().setSmartRouting(false).setAddresses(new ArrayList<>(addresses)).setConnectionTimeout(Math.max(1000, commandTimeoutMs));
      ClientConnectionStrategyConfig cs = cc.getConnectionStrategyConfig();
      cs.setAsyncStart(true).setReconnectMode(ClientConnectionStrategyConfig.ReconnectMode.ASYNC);
      ConnectionRetryConfig retry = cs.getConnectionRetryConfig();
      retry.setClusterConnectTimeoutMillis(-1).setInitialBackoffMillis(100).setMaxBackoffMillis(1000).setMultiplier(2).setJitter(0.2);
      cc.addListenerConfig(new com.hazelcast.config.ListenerConfig((com.hazelcast.core.LifecycleListener) e -> {
        if (e.getState() == LifecycleEvent.LifecycleState.CLIENT_CONNECTED) connected.countDown();
        if (e.getState() == LifecycleEvent.LifecycleState.CLIENT_CONNECTED || e.getState() == LifecycleEvent.LifecycleState.CLIENT_DISCONNECTED) log("client " + e.getState());
      }));
      client = HazelcastClient.newHazelcastClient(cc);
      log("Hazelcast client made in " + (System.nanoTime() - t0) / 1_000_000 + " ms (JVM up " + ManagementFactory.getRuntimeMXBean().getUptime() + " ms)");
    }
    return client;
  }

  <T> T on(Hold h, Callable<T> call, long timeoutMs) throws Exception {
    return h.thread.submit(call).get(timeoutMs, TimeUnit.MILLISECONDS);
  }

  /** Unlocks, quietly and by their own threads, what this program may still hold on key. Null, or why one could not be unlocked (it stays doubtful). */
  String clearKey(String key) {
    // First: getLock asks the cluster for the lock's CP group, and may throw offline before anything here changed.
    FencedLock lock = client.getCPSubsystem().getLock(key);
    List<Hold> old = new ArrayList<>(doubtful.getOrDefault(key, List.of()));
    doubtful.remove(key);
    holds.values().removeIf(h -> {
      if (h.key.equals(key)) {
        old.add(h);
        return true;
      }
      return false;
    });
    for (int i = 0; i < old.size(); i++) {
      Hold h = old.get(i);
      try {
        int n = on(h, () -> {
          int k = 0;
          while (lock.isLockedByCurrentThread()) {
            lock.unlock();
            k++;
          }
          return k;
        }, commandTimeoutMs);
        if (n > 0) log("released an abandoned hold on " + key + " (" + (h.owner == null ? "an acquire answered error" : h.owner) + ", " + n + " entries)");
        h.thread.shutdown();
      } catch (Throwable e) {
        if (root(e) instanceof IllegalMonitorStateException) {
          if (root(e) instanceof LockOwnershipLostException) toldLost(h);
          h.thread.shutdown();
          continue;
        }
        log("clearing " + key + ": " + shortError(e));
        doubtful.computeIfAbsent(key, k -> new ArrayList<>()).addAll(old.subList(i, old.size()));
        return "could not release an earlier hold on " + key + ": " + shortError(e);
      }
    }
    return null;
  }

  public Map<String, Object> acquire(Object id, Map<String, Object> req) throws Exception {
    try {
      return acquireOrOffline(id, req);
    } catch (HazelcastClientOfflineException e) {
      // From getLock/getSemaphore, which ask the cluster for the object's CP group before anything is sent: definite.
      return replyWith(id, "fail", "error", "offline");
    }
  }

  public Map<String, Object> release(Object id, Map<String, Object> req) {
    try {
      return releaseOrOffline(id, req);
    } catch (HazelcastClientOfflineException e) {
      return replyWith(id, "fail", "error", "offline");
    }
  }

  Map<String, Object> acquireOrOffline(Object id, Map<String, Object> req) throws Exception {
    String key = String.valueOf(req.get("key"));
    long waitMs = Json.num(req.get("wait_ms"), 0);
    // fencecheck waits wait_ms + 2 x command_timeout_ms for the answer: all of this fits in less.
    long deadline = System.nanoTime() / 1_000_000 + waitMs + commandTimeoutMs + commandTimeoutMs * 3 / 4;
    try {
      made.get(commandTimeoutMs, TimeUnit.MILLISECONDS);
    } catch (TimeoutException e) {
      return replyWith(id, "fail", "error", "offline: the client is still being made");
    } catch (ExecutionException e) {
      return replyWith(id, "fail", "error", "offline: " + shortError(e));
    }
    // Nothing has been sent while it is not connected: a definite fail.
    if (!connected.await(Math.max(0, deadline - waitMs - commandTimeoutMs - System.nanoTime() / 1_000_000), TimeUnit.MILLISECONDS))
      return replyWith(id, "fail", "error", "offline: not connected to the cluster yet");
    if (semaphore) return acquirePermit(id, key, waitMs, (int) Json.num(req.get("permits"), 1), deadline);
    Object reenter = req.get("reenter");
    if (reenter != null) return reenter(id, key, waitMs, String.valueOf(reenter));
    String unclear = clearKey(key);
    if (unclear != null) return replyWith(id, "error", "error", unclear);
    Hold h = new Hold(key);
    FencedLock lock = client.getCPSubsystem().getLock(key);
    long fence;
    try {
      fence = on(h, () -> lock.tryLockAndGetFence(waitMs, TimeUnit.MILLISECONDS), Math.max(1, deadline - System.nanoTime() / 1_000_000));
    } catch (Throwable e) {
      if (root(e) instanceof HazelcastClientOfflineException) {
        h.thread.shutdown();
        return replyWith(id, "fail", "error", "offline");
      }
      doubtful.computeIfAbsent(key, k -> new ArrayList<>()).add(h);
      return replyWith(id, "error", "error", e instanceof TimeoutException ? "timeout waiting for Hazelcast" : shortError(e));
    }
    if (fence == FencedLock.INVALID_FENCE) {
      h.thread.shutdown();
      return replyWith(id, "fail", "error", waitMs == 0 ? "busy" : "timeout");
    }
    holdCount++;
    h.owner = ownerPrefix + "-h" + holdCount;
    h.fence = fence;
    h.entries = 1;
    h.announced = true;
    holds.put(h.owner, h);
    Map<String, Object> r = reply(id, "ok");
    r.put("owner", h.owner);
    r.put("fence", fence);
    r.put("fence_source", "fencedlock");
    return r;
  }

  /** The same hold entered once more, by its own thread: FencedLock counts it and gives the same fence. */
  Map<String, Object> reenter(Object id, String key, long waitMs, String owner) throws Exception {
    Hold h = holds.get(owner);
    if (h == null || !h.key.equals(key)) return replyWith(id, "fail", "error", "not-owner");
    FencedLock lock = client.getCPSubsystem().getLock(key);
    long fence;
    try {
      fence = on(h, () -> lock.tryLockAndGetFence(waitMs, TimeUnit.MILLISECONDS), waitMs + commandTimeoutMs + commandTimeoutMs / 2);
    } catch (Throwable e) {
      if (root(e) instanceof HazelcastClientOfflineException) return replyWith(id, "fail", "error", "offline");
      if (root(e) instanceof LockOwnershipLostException) {
        // Hazelcast told the hold's thread its session is gone: the outer hold is lost too.
        toldLost(h);
        return replyWith(id, "fail", "error", "not-owner");
      }
      return replyWith(id, "error", "error", e instanceof TimeoutException ? "timeout waiting for Hazelcast" : shortError(e));
    }
    if (fence == FencedLock.INVALID_FENCE) return replyWith(id, "fail", "error", waitMs == 0 ? "busy" : "timeout");
    h.entries++;
    Map<String, Object> r = reply(id, "ok");
    r.put("owner", owner);
    r.put("fence", fence);
    r.put("fence_source", "fencedlock");
    return r;
  }

  Map<String, Object> releaseOrOffline(Object id, Map<String, Object> req) {
    String owner = String.valueOf(req.get("owner"));
    Hold h = holds.get(owner);
    if (h == null) return replyWith(id, "fail", "error", "not-owner");
    if (semaphore) return releasePermit(id, h);
    FencedLock lock = client.getCPSubsystem().getLock(h.key);
    try {
      on(h, () -> {
        lock.unlock();
        return null;
      }, 2L * commandTimeoutMs - commandTimeoutMs / 4);
    } catch (Throwable e) {
      Throwable r0 = root(e);
      if (r0 instanceof IllegalMonitorStateException) {
        holds.remove(owner);
        h.thread.shutdown();
        Map<String, Object> r = reply(id, "ok");
        r.put("released", false);
        if (r0 instanceof LockOwnershipLostException) r.put("lost", "session-expired");
        return r;
      }
      if (r0 instanceof HazelcastClientOfflineException) return replyWith(id, "fail", "error", "offline");
      // Unknown: it may still be held; unlocked before the key is taken again.
      holds.remove(owner);
      doubtful.computeIfAbsent(h.key, k -> new ArrayList<>()).add(h);
      return replyWith(id, "error", "error", e instanceof TimeoutException ? "timeout waiting for Hazelcast" : shortError(e));
    }
    if (--h.entries == 0) {
      holds.remove(owner);
      h.thread.shutdown();
    }
    Map<String, Object> r = reply(id, "ok");
    r.put("released", true);
    return r;
  }

  // ---- semaphore mode: Hazelcast's CP ISemaphore ----

  /** A call of the semaphore's, on a pool thread, within timeoutMs. */
  <T> T call(Callable<T> c, long timeoutMs) throws Exception {
    return calls.submit(c).get(Math.max(1, timeoutMs), TimeUnit.MILLISECONDS);
  }

  /** "No valid session!", or a SessionExpiredException under it: the session that had the permits has ended. */
  static boolean sessionGone(Throwable t) {
    return t instanceof IllegalStateException && (t.getCause() instanceof SessionExpiredException || String.valueOf(t.getMessage()).contains("No valid session"));
  }

  /** One permit of `permits` on key, within the deadline; the semaphore is initialized by this program's first acquire of the key. */
  Map<String, Object> acquirePermit(Object id, String key, long waitMs, int permits, long deadline) throws Exception {
    ISemaphore s = client.getCPSubsystem().getSemaphore(key);
    String unclear = giveBack(s, key);
    if (unclear != null) return replyWith(id, "error", "error", unclear);
    boolean granted;
    try {
      if (!initialized.contains(key)) {
        boolean first = call(() -> s.init(permits), commandTimeoutMs);
        initialized.add(key);
        if (first) log("initialized " + key + " with " + permits + " permits");
      }
      granted = call(() -> s.tryAcquire(waitMs, TimeUnit.MILLISECONDS), deadline - System.nanoTime() / 1_000_000);
    } catch (Throwable e) {
      if (root(e) instanceof HazelcastClientOfflineException) return replyWith(id, "fail", "error", "offline");
      // The tryAcquire may have been granted (or may still be): a permit to give back before the key is taken again.
      owed.merge(key, 1, Integer::sum);
      return replyWith(id, "error", "error", e instanceof TimeoutException ? "timeout waiting for Hazelcast" : shortError(e));
    }
    if (!granted) return replyWith(id, "fail", "error", waitMs == 0 ? "busy" : "timeout");
    Hold h = new Hold(key);
    h.thread.shutdown(); // a permit is the session's, not a thread's: its calls run on the pool
    holdCount++;
    h.owner = ownerPrefix + "-h" + holdCount;
    h.entries = 1;
    holds.put(h.owner, h);
    Map<String, Object> r = reply(id, "ok");
    r.put("owner", h.owner);
    r.put("fence", null);
    return r;
  }

  /** Gives back, quietly, the permits this program may still have on key (abandoned holds, acquires answered error). Null, or why it could not. */
  String giveBack(ISemaphore s, String key) {
    int n = owed.getOrDefault(key, 0);
    for (Hold h : holds.values()) if (h.key.equals(key)) n++;
    holds.values().removeIf(h -> h.key.equals(key));
    owed.remove(key);
    for (int i = 0; i < n; i++) {
      try {
        call(() -> {
          s.release();
          return null;
        }, commandTimeoutMs);
        log("gave back a permit of an abandoned hold or unknown acquire on " + key);
      } catch (Throwable e) {
        // The session has no more permits of this semaphore (or no session): nothing left to give back.
        if (root(e) instanceof IllegalStateException) return null;
        owed.put(key, n - i);
        log("giving back on " + key + ": " + shortError(e));
        return "could not give back an earlier permit on " + key + ": " + shortError(e);
      }
    }
    return null;
  }

  Map<String, Object> releasePermit(Object id, Hold h) {
    ISemaphore s = client.getCPSubsystem().getSemaphore(h.key);
    try {
      call(() -> {
        s.release();
        return null;
      }, 2L * commandTimeoutMs - commandTimeoutMs / 4);
    } catch (Throwable e) {
      Throwable r0 = root(e);
      if (r0 instanceof HazelcastClientOfflineException) return replyWith(id, "fail", "error", "offline");
      holds.remove(h.owner);
      if (r0 instanceof IllegalStateException) {
        Map<String, Object> r = reply(id, "ok");
        r.put("released", false);
        if (sessionGone(r0)) r.put("lost", "session-expired");
        return r;
      }
      // Unknown: the permit may still be this session's; given back before the key is taken again.
      owed.merge(h.key, 1, Integer::sum);
      return replyWith(id, "error", "error", e instanceof TimeoutException ? "timeout waiting for Hazelcast" : shortError(e));
    }
    holds.remove(h.owner);
    Map<String, Object> r = reply(id, "ok");
    r.put("released", true);
    return r;
  }
}
