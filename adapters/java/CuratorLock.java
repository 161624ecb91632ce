// fencecheck's reference adapter for Apache Curator's locks (protocol 1,
// docs/adapter-protocol.md): JSON lines on stdin, replies and notices on stdout, logs
// on stderr. One program per logical client, compiled with pom.xml's environment (Curator,
// ZooKeeper's client and slf4j-simple, to stderr, at the pom's versions); jvm.sh execs the JVM.
//
// The lock is used as Curator's documentation says: one CuratorFramework from
// CuratorFrameworkFactory, started at init (start() does not block: it connects in the
// background), one InterProcessMutex per key path /fencecheck/locks/<key>, acquire(wait,
// MILLISECONDS), release(), and a ConnectionStateListener whose SUSPENDED, LOST and
// RECONNECTED become the protocol's notices. The other lock kinds, at the same path:
// InterProcessReadWriteLock(client, path, owner).readLock()/writeLock() for a "mode",
// InterProcessSemaphoreV2(client, path, permits).acquire(wait) -> Lease for "permits",
// and the InterProcessMutex acquired again on the thread that holds it for "reenter".
//
// Choices, each for a reason:
// - Session timeout = ttl_ms, as fencecheck's own ZooKeeper client does: a hold is
//   a session's ephemeral node, so the session timeout is the lease. A worker paused
//   longer than ttl_ms loses its session, and its holds, on the server. (ZooKeeper
//   clamps it to [minSessionTimeout, maxSessionTimeout]; the negotiated value is logged.)
// - Connection timeout = command_timeout_ms / 2 (how long an operation waits for a
//   connection before failing), and RetryPolicy RetryUntilElapsed(command_timeout_ms / 4,
//   50 ms). Curator retries an operation only on connection loss, and its lock operations
//   are safe to retry (the create is in protected mode, the delete is guaranteed). Both
//   are halved from command_timeout_ms because an acquire or a release is two or three
//   ZooKeeper operations and fencecheck's deadline is wait_ms + 2 x command_timeout_ms
//   (2 x for a release): with command_timeout_ms itself as the connection timeout, an
//   acquire against dead servers answered after wait_ms + 2.2 x command_timeout_ms.
// - Fence: the czxid of this hold's own lock node (InterProcessMutex's getLockPath(),
//   a protected method, exposed by a subclass), read with one exists() after acquire.
//   zxids only grow and no two nodes share one, so a later grant has a larger czxid.
// - Every InterProcessMutex call runs on the main thread: the mutex is owned by a thread
//   and reentrant for it. Only a "reenter" request re-enters (Curator counts it and asks
//   ZooKeeper nothing: the same node, so the same fence, fence_on_reentry "same"; each
//   release counts one down, the last deletes the node). A plain acquire of a key this
//   program still holds releases that hold first, every entry (below), and a hold that
//   was reported lost and never released is cleared (mutex.release(), quietly), so
//   Curator's reentrancy never hands out a new hold without asking ZooKeeper.
// - Cancel: requests are read on a thread of their own, which answers a cancel at once
//   and interrupts the main thread's lock call (Curator's acquire then throws and deletes
//   its node with a guaranteed delete, which an interrupted thread leaves to Curator's
//   background retries). The acquire then waits up to command_timeout_ms for its nodes
//   (found by their data, the owner) to be gone: fail "cancelled", or error
//   "cancel-unknown".
// - A semaphore lease's fence is its lease node's czxid: unique and rising with each
//   lease granted, though up to `permits` leases hold at once. Unreadable: the lease is
//   given back and the acquire answered error (a fenced adapter has no null fence).
// - acquire false: Curator deleted its queued node (a failed delete throws, and then we
//   answer error), so "timeout" is definite.
// - release: the hold's node is checked first; gone means the session that owned it
//   ended: ok released:false lost:"session-expired" (mutex.release() still clears the
//   thread's state). A connection error while deleting: error (Curator's guaranteed
//   delete goes on in the background).
// - A hold still unreleased when its key is acquired again was abandoned by the workload
//   (after an unknown outcome its new process never releases the old hold): it is
//   released first, or its node would keep the key locked for the session's whole life.
import static fencecheck.Protocol.*;

import fencecheck.Json;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreV2;
import org.apache.curator.framework.recipes.locks.Lease;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.retry.RetryUntilElapsed;
import org.apache.zookeeper.data.Stat;

public final class CuratorLock implements CancellableHandler {
  static final String LOCK_ROOT = "/fencecheck/locks";
  /** What it runs, read from the jars on its classpath (pom.xml's environment), so a log never names a version it did not load. */
  static final String LIBRARY =
      "Apache Curator " + jarVersion("curator-recipes") + " InterProcessMutex, InterProcessReadWriteLock, InterProcessSemaphoreV2 (Maven Central), ZooKeeper client " + jarVersion("zookeeper");

  /** The lock kinds it offers, as its manifest says them. */
  static final Map<String, Object> KINDS = Map.of("reentrant", Map.of("fence_on_reentry", "same"), "rw", true, "semaphore", true, "cancel", true);

  // ---- output: replies and notices go through fencecheck.Protocol's send, from any thread ----
  static void log(String s) {
    System.err.println("[curator-adapter] " + s);
    System.err.flush();
  }

  // ---- a mutex whose lock node path can be read (getLockPath() is protected) ----
  static final class FencedMutex extends InterProcessMutex {
    private volatile byte[] nodeData = new byte[0];

    FencedMutex(CuratorFramework client, String path) {
      super(client, path);
    }

    /** The lock node's data: the owner of the hold it is made for (fencecheck's name for it). */
    void setNodeData(String owner) {
      nodeData = owner.getBytes(StandardCharsets.UTF_8);
    }

    @Override
    protected byte[] getLockNodeBytes() {
      return nodeData;
    }

  }

  /** What a hold holds: a mutex (reentrant: `entries` deep), a read or write lock, or a semaphore's lease. */
  static final class Hold {
    final String key, owner, node;
    final long fence, session;
    /** The InterProcessMutex (or a read-write lock's read or write side), or null for a lease. */
    final InterProcessMutex mutex;
    final Lease lease;
    /** How many acquires of this owner hold it: 1, and one more per re-entry. */
    int entries = 1;
    volatile boolean lost;
    /** Its ok has been sent: a lost notice may name it. */
    volatile boolean announced;
    volatile String lostWhy;

    Hold(String key, String owner, String node, long fence, long session, InterProcessMutex mutex, Lease lease) {
      this.key = key;
      this.owner = owner;
      this.node = node;
      this.fence = fence;
      this.session = session;
      this.mutex = mutex;
      this.lease = lease;
    }
  }

  interface NodeQuery {
    List<String> run() throws Exception;
  }

  // ---- state ----
  private CuratorFramework client;
  private String ownerPrefix = "c";
  private int commandTimeoutMs = 3000;
  private int holdCount = 0;
  private final Map<String, FencedMutex> mutexes = new ConcurrentHashMap<>();
  /** Counts LOST states; a hold granted across one is checked after its ok is sent. */
  private volatile long lostEpoch = 0;
  private Hold justGranted;
  private long justGrantedEpoch;
  /** key -> the hold this program has on it (one hold a key at most). */
  private final Map<String, Hold> holds = new ConcurrentHashMap<>();

  // ---- cancel: the reading thread (fencecheck.Protocol's serveCancellable) interrupts the main thread's lock call ----
  private final Cancels cancels = new Cancels();

  public static void main(String[] args) throws Exception {
    // Standard output carries messages only: keep it for ourselves and send anything a
    // library prints there to standard error.
    takeStdout();
    // Requests are handled in order on the main thread (an InterProcessMutex is owned by
    // the thread that acquired it), but a cancel, answered at once on the reading thread.
    serveCancellable(new CuratorLock());
  }

  public Cancels cancels() {
    return cancels;
  }

  /** Runs a lock call of the acquire `id` that its cancel may interrupt. */
  <T> T interruptible(Object id, LockCall<T> call) throws Exception {
    Thread self = Thread.currentThread();
    try {
      return cancels.during(id, self::interrupt, call);
    } finally {
      // An interrupt that came as the call returned is for a call that is over.
      Thread.interrupted();
    }
  }

  boolean cancelAsked(Object id) {
    return cancels.asked(id);
  }

  /**
   * The answer for an acquire its cancel interrupted. Curator deletes the node it queued
   * with a guaranteed delete, which an interrupted thread leaves to its background
   * retries: wait up to the command timeout for `left` (the nodes of this acquire) to be
   * empty. Gone: fail "cancelled"; still there, or unreadable: error "cancel-unknown".
   */
  Map<String, Object> withdrawn(Object id, String owner, NodeQuery left) {
    Thread.interrupted();
    long deadline = System.nanoTime() + commandTimeoutMs * 1_000_000L;
    String why = "its node is still there";
    for (;;) {
      try {
        List<String> nodes = left.run();
        if (nodes.isEmpty()) return replyWith(replyWith(id, "fail", "error", "cancelled"), "owner", owner);
        why = "its node is still there: " + nodes;
      } catch (Exception e) {
        why = "its node is unreadable: " + shortError(e);
      }
      if (System.nanoTime() > deadline) return replyWith(replyWith(id, "error", "error", "cancel-unknown"), "detail", why);
      try {
        Thread.sleep(50);
      } catch (InterruptedException e) {
        Thread.interrupted();
      }
    }
  }

  /** The children of `dir` whose data is `owner`'s name; or, `owner` null, those of our session. */
  List<String> ours(String dir, String owner) throws Exception {
    List<String> found = new ArrayList<>();
    List<String> children;
    try {
      children = client.getChildren().forPath(dir);
    } catch (org.apache.zookeeper.KeeperException.NoNodeException e) {
      return found;
    }
    long session = client.getZookeeperClient().getZooKeeper().getSessionId();
    for (String c : children) {
      String path = dir + "/" + c;
      Stat stat = new Stat();
      byte[] data;
      try {
        data = client.getData().storingStatIn(stat).forPath(path);
      } catch (org.apache.zookeeper.KeeperException.NoNodeException e) {
        continue;
      }
      boolean mine = owner == null ? stat.getEphemeralOwner() == session : owner.equals(new String(data == null ? new byte[0] : data, StandardCharsets.UTF_8));
      if (mine) found.add(path);
    }
    return found;
  }

  // ---- init ----
  public Map<String, Object> init(Object id, Map<String, Object> req) {
    if (client != null) return replyWith(id, "error", "error", "init sent twice");
    long protocol = Json.num(req.get("protocol"), 1);
    if (protocol < 1) return replyWith(id, "error", "error", "protocol " + protocol + " not spoken (this adapter speaks 1)");
    Object prefix = req.get("owner_prefix");
    if (prefix instanceof String) ownerPrefix = (String) prefix;
    int ttlMs = (int) Json.num(req.get("ttl_ms"), 1000);
    commandTimeoutMs = (int) Json.num(req.get("command_timeout_ms"), 3000);
    List<String> hosts = new ArrayList<>();
    Object eps = req.get("endpoints");
    if (eps instanceof List) {
      for (Object e : (List<?>) eps) {
        if (!(e instanceof Map)) continue;
        Map<?, ?> ep = (Map<?, ?>) e;
        String host = String.valueOf(ep.get("host"));
        if (host.contains(":") && !host.startsWith("[")) host = "[" + host + "]";
        hosts.add(host + ":" + Json.num(ep.get("port"), 2181));
      }
    }
    if (hosts.isEmpty()) return replyWith(id, "error", "error", "init has no endpoints");
    String connectString = String.join(",", hosts);
    int retryForMs = Math.max(50, commandTimeoutMs / 4);
    int connectionTimeoutMs = Math.max(100, commandTimeoutMs / 2);
    client = CuratorFrameworkFactory.builder()
        .connectString(connectString)
        .sessionTimeoutMs(ttlMs)
        .connectionTimeoutMs(connectionTimeoutMs)
        .retryPolicy(new RetryUntilElapsed(retryForMs, 50))
        .build();
    client.getConnectionStateListenable().addListener((c, state) -> onState(state));
    client.getUnhandledErrorListenable().addListener((message, e) -> log("curator unhandled error: " + message + ": " + e));
    // start() connects in the background: init answers at once, even where nothing listens.
    client.start();
    log("init: hosts=" + connectString + " session_timeout_ms=" + ttlMs + " connection_timeout_ms=" + connectionTimeoutMs
        + " retry=RetryUntilElapsed(" + retryForMs + ",50) owner_prefix=" + ownerPrefix);
    Map<String, Object> r = reply(id, "init_ok");
    r.put("fences", true);
    r.put("renew", "none");
    r.put("library", LIBRARY);
    r.put("kinds", KINDS);
    return r;
  }

  // ---- connection states -> notices (Curator's event thread) ----
  void onState(ConnectionState state) {
    long negotiated = -1;
    try {
      negotiated = client.getZookeeperClient().getZooKeeper().getSessionTimeout();
    } catch (Exception ignored) {
      // not known now
    }
    log("connection state " + state + " (negotiated session timeout " + negotiated + " ms)");
    Map<String, Object> n = new LinkedHashMap<>();
    switch (state) {
      case SUSPENDED:
        n.put("type", "suspended");
        send(n);
        break;
      case RECONNECTED:
        n.put("type", "reconnected");
        send(n);
        break;
      case LOST:
        lostEpoch++;
        // The session is gone (expired, or suspended for a whole session timeout: Curator
        // then ends it itself): every hold of this program went with its ephemeral node.
        for (Hold h : holds.values()) {
          synchronized (this) {
            if (h.lost || !h.announced) continue;
            h.lost = true;
            h.lostWhy = "session-expired";
          }
          sendLost(h.key, h.owner);
        }
        break;
      default:
        // CONNECTED (the first connection) and READ_ONLY say nothing about holds.
        break;
    }
  }

  FencedMutex mutex(String key) {
    return mutexes.computeIfAbsent(key, k -> new FencedMutex(client, LOCK_ROOT + "/" + k));
  }

  // ---- acquire ----
  public Map<String, Object> acquire(Object id, Map<String, Object> req) throws Exception {
    if (client == null) return replyWith(id, "fail", "error", "no init");
    String key = String.valueOf(req.get("key"));
    long waitMs = Math.max(0, Json.num(req.get("wait_ms"), 0));
    Object mode = req.get("mode");
    Object reenter = req.get("reenter");
    Object permits = req.get("permits");
    if (reenter != null) return reenter(id, key, String.valueOf(reenter));
    if (mode != null && !"read".equals(mode) && !"write".equals(mode)) return replyWith(id, "error", "error", "unknown mode " + mode);
    Hold old = holds.get(key);
    if (old != null) {
      Map<String, Object> refused = letGo(id, old);
      if (refused != null) return refused;
    }
    String owner = ownerPrefix + "-h" + (++holdCount);
    String path = LOCK_ROOT + "/" + key;
    if (permits != null) return acquireLease(id, key, path, owner, (int) Json.num(permits, 1), waitMs);
    InterProcessMutex mutex;
    if (mode != null) {
      // One InterProcessReadWriteLock a hold, its nodes' data the owner (Curator's lockData).
      InterProcessReadWriteLock rw = new InterProcessReadWriteLock(client, path, owner.getBytes(StandardCharsets.UTF_8));
      mutex = "read".equals(mode) ? rw.readLock() : rw.writeLock();
    } else {
      FencedMutex fenced = mutex(key);
      // Should not happen (every hold is in `holds`): clear it rather than reenter.
      if (fenced.isOwnedByCurrentThread()) forget(fenced);
      fenced.setNodeData(owner);
      mutex = fenced;
    }
    long t0 = System.nanoTime();
    Attempt<Boolean> a = attempt(id, key, owner, () -> ours(path, owner), () -> mutex.acquire(waitMs, TimeUnit.MILLISECONDS));
    if (a.reply != null) return a.reply;
    long queuedMs = (System.nanoTime() - t0) / 1_000_000;
    if (!a.value) {
      // Curator deleted our queued node before returning false (a delete that fails throws).
      return replyWith(id, "fail", "error", "timeout");
    }
    return granted(id, key, owner, lockPath(mutex), queuedMs, mutex, null);
  }

  /** A lock call's result, or the reply that ends its acquire instead. */
  static final class Attempt<T> {
    T value;
    Map<String, Object> reply;
  }

  /**
   * The acquire `id`'s lock call, which its cancel may interrupt (`left`: the nodes it
   * may have left behind). Cancelled before the call: fail "cancelled", nothing sent.
   * Any other throw is unknown: the node may have been made and granted (Curator's
   * protected mode deletes a node whose create got no answer, in the background).
   */
  <T> Attempt<T> attempt(Object id, String key, String owner, NodeQuery left, LockCall<T> call) {
    Attempt<T> a = new Attempt<>();
    try {
      a.value = interruptible(id, call);
    } catch (NotSent e) {
      a.reply = replyWith(replyWith(id, "fail", "error", "cancelled"), "owner", owner);
    } catch (Exception e) {
      if (cancelAsked(id)) {
        a.reply = withdrawn(id, owner, left);
      } else {
        log("acquire " + key + " threw " + e);
        a.reply = replyWith(id, "error", "error", shortError(e));
      }
    }
    return a;
  }

  /**
   * A re-entry of the hold `owner` has on `key`: InterProcessMutex.acquire again on the
   * thread that holds it, which Curator grants by counting, asking ZooKeeper nothing.
   * The same node, so the same fence (fence_on_reentry "same").
   */
  Map<String, Object> reenter(Object id, String key, String owner) throws Exception {
    Hold h = holds.get(key);
    // Nothing sent: this program has no such hold, or not of a mutex.
    if (h == null || !h.owner.equals(owner) || !(h.mutex instanceof FencedMutex)) return replyWith(id, "fail", "error", "not-owner");
    if (!h.mutex.acquire(0, TimeUnit.MILLISECONDS)) return replyWith(id, "error", "error", "re-entry not granted by Curator");
    h.entries++;
    String node = lockPath(h.mutex);
    Map<String, Object> r = reply(id, "ok");
    r.put("owner", h.owner);
    r.put("fence", h.fence);
    r.put("fence_source", "czxid");
    r.put("node", node);
    r.put("entries", h.entries);
    // Curator hands back the lock node it holds: a different one would be a new hold.
    if (!node.equals(h.node)) r.put("node_changed", true);
    return r;
  }

  /**
   * A lease of an InterProcessSemaphoreV2 of `permits` leases: acquire(wait) gives a
   * Lease, or null when none came in time. Its fence is the lease node's czxid: unique,
   * rising with each lease granted (up to `permits` leases hold at once).
   */
  Map<String, Object> acquireLease(Object id, String key, String path, String owner, int permits, long waitMs) {
    InterProcessSemaphoreV2 semaphore = new InterProcessSemaphoreV2(client, path, permits);
    semaphore.setNodeData(owner.getBytes(StandardCharsets.UTF_8));
    // This acquire's nodes: its lease (data: the owner) and a node of our session queued in the semaphore's lock.
    NodeQuery left = () -> {
      List<String> nodes = ours(path + "/leases", owner);
      nodes.addAll(ours(path + "/locks", null));
      return nodes;
    };
    long t0 = System.nanoTime();
    Attempt<Lease> a = attempt(id, key, owner, left, () -> semaphore.acquire(waitMs, TimeUnit.MILLISECONDS));
    if (a.reply != null) return a.reply;
    Lease lease = a.value;
    long queuedMs = (System.nanoTime() - t0) / 1_000_000;
    if (lease == null) {
      // Curator returned the lease node it made, quietly (a failed delete is not thrown): look.
      try {
        List<String> nodes = left.run();
        if (!nodes.isEmpty()) return replyWith(replyWith(id, "error", "error", "lease node left behind"), "node", nodes.get(0));
      } catch (Exception e) {
        return replyWith(id, "error", "error", "acquire failed; lease nodes unreadable: " + shortError(e));
      }
      return replyWith(id, "fail", "error", "timeout");
    }
    // getNodeName() is the lease node's name under <path>/leases.
    return granted(id, key, owner, path + "/leases/" + lease.getNodeName(), queuedMs, null, lease);
  }

  /** The ok of a hold Curator granted on `node`, its fence the node's czxid; or error when that cannot be read. */
  Map<String, Object> granted(Object id, String key, String owner, String node, long queuedMs, InterProcessMutex mutex, Lease lease) {
    long epoch = lostEpoch;
    Stat stat;
    long session = -1;
    int negotiatedMs = -1;
    try {
      org.apache.zookeeper.ZooKeeper zk = client.getZookeeperClient().getZooKeeper();
      session = zk.getSessionId();
      negotiatedMs = zk.getSessionTimeout();
      stat = client.checkExists().forPath(node);
    } catch (Exception e) {
      // Granted by Curator, but its fence could not be read: give the hold back, outcome unknown.
      log("acquire " + key + ": granted " + node + " but reading its stat threw " + e + "; releasing it");
      giveBack(mutex, lease);
      return replyWith(id, "error", "error", "granted but fence unreadable: " + shortError(e));
    }
    if (stat == null) {
      // Curator said it holds, but the node is already gone: its session ended (the race
      // of CURATOR-604 looks like this). The hold is worth nothing; say we cannot know.
      log("acquire " + key + ": Curator granted " + node + " but the node is gone (session ended): CURATOR-604-like");
      giveBack(mutex, lease);
      return replyWith(id, "error", "error", "granted-node-gone");
    }
    boolean foreign = stat.getEphemeralOwner() != session;
    if (foreign) {
      log("acquire " + key + ": node " + node + " belongs to session 0x" + Long.toHexString(stat.getEphemeralOwner())
          + ", ours is 0x" + Long.toHexString(session) + " (a node of an ended session: CURATOR-604-like)");
    }
    Hold h = new Hold(key, owner, node, stat.getCzxid(), stat.getEphemeralOwner(), mutex, lease);
    holds.put(key, h);
    justGranted = h;
    justGrantedEpoch = epoch;
    Map<String, Object> r = reply(id, "ok");
    r.put("owner", owner);
    r.put("fence", stat.getCzxid());
    // The lease of a session-based hold: the session timeout ZooKeeper granted.
    if (negotiatedMs > 0) r.put("ttl_ms", negotiatedMs);
    r.put("fence_source", "czxid");
    r.put("node", node);
    r.put("session", "0x" + Long.toHexString(stat.getEphemeralOwner()));
    r.put("queued_ms", queuedMs);
    // Curator granted a node whose session is not the one we have now (an ended one).
    if (foreign) r.put("session_mismatch", true);
    return r;
  }

  /**
   * A hold still ours when its key is acquired again was abandoned by the workload (a
   * process whose operation had an unknown outcome never releases its hold; both
   * workloads hold one lock at a time). Curator would reenter a mutex without asking
   * ZooKeeper, and the node would keep the key locked for as long as our session lives:
   * release it first, every entry. Returns the acquire's fail if that did not work.
   */
  Map<String, Object> letGo(Object id, Hold old) {
    holds.remove(old.key, old);
    if (old.lost) {
      forget(old);
      return null;
    }
    log("acquire " + old.key + ": releasing " + old.owner + " (" + old.node + "), abandoned without a release");
    try {
      if (old.lease != null) old.lease.close();
      else while (old.mutex.isOwnedByCurrentThread()) old.mutex.release();
    } catch (IllegalMonitorStateException e) {
      // Curator had already forgotten it.
    } catch (Exception e) {
      // Its guaranteed delete goes on in the background. Nothing of this acquire was sent.
      return replyWith(id, "fail", "error", "previous hold not released: " + shortError(e));
    }
    return null;
  }

  /**
   * A LOST that came after the stat of a new hold, before its ok was sent, named no hold
   * (the listener names only holds whose ok is out: a notice about an owner not yet granted
   * would be about nobody): name it now.
   */
  public void afterAcquire() {
    Hold h = justGranted;
    justGranted = null;
    if (h == null) return;
    h.announced = true;
    if (lostEpoch == justGrantedEpoch) return;
    synchronized (this) {
      if (h.lost) return;
      h.lost = true;
      h.lostWhy = "session-expired";
    }
    sendLost(h.key, h.owner);
  }

  // ---- release ----
  public Map<String, Object> release(Object id, Map<String, Object> req) {
    if (client == null) return replyWith(id, "fail", "error", "no init");
    String key = String.valueOf(req.get("key"));
    Object owner = req.get("owner");
    Hold h = holds.get(key);
    if (h == null || (owner != null && !owner.equals(h.owner))) {
      // Nothing was sent: this program holds no such hold.
      return replyWith(id, "fail", "error", "not-owner");
    }
    if (h.entries > 1) {
      // A re-entry's release: Curator counts it down, asking ZooKeeper nothing; the lock stays held.
      try {
        h.mutex.release();
      } catch (IllegalMonitorStateException e) {
        return replyWith(id, "fail", "error", "not-owner");
      } catch (Exception e) {
        // Curator's count-down sends nothing; nothing else is expected here.
        return replyWith(id, "error", "error", shortError(e));
      }
      h.entries--;
      return replyWith(replyWith(id, "ok", "released", true), "entries", h.entries);
    }
    if (h.lost) {
      forget(h);
      Map<String, Object> r = replyWith(id, "ok", "released", false);
      r.put("lost", h.lostWhy);
      return r;
    }
    Stat stat;
    try {
      stat = client.checkExists().forPath(h.node);
    } catch (Exception e) {
      // Nothing deleted. The hold stays in `holds`: the workload never releases it again
      // after this error, and the next acquire of the key releases it first (answering now,
      // rather than waiting out a guaranteed delete on a broken connection, keeps this
      // reply inside fencecheck's deadline).
      return replyWith(id, "error", "error", shortError(e));
    }
    if (stat == null || stat.getCzxid() != h.fence) {
      // Only our own release or the end of our session deletes our node.
      forget(h);
      Map<String, Object> r = replyWith(id, "ok", "released", false);
      r.put("lost", "session-expired");
      return r;
    }
    holds.remove(key);
    try {
      if (h.lease != null) h.lease.close();
      else h.mutex.release();
    } catch (IllegalMonitorStateException e) {
      return replyWith(id, "fail", "error", "not-owner");
    } catch (Exception e) {
      // Unknown whether the delete happened (Curator keeps trying it in the background,
      // and has forgotten the hold either way).
      log("release " + key + " threw " + e);
      return replyWith(id, "error", "error", shortError(e));
    }
    return replyWith(id, "ok", "released", true);
  }

  /** Drop a hold whose node is gone: clear Curator's per-thread state so the key can be acquired afresh. */
  void forget(Hold h) {
    holds.remove(h.key, h);
    if (h.mutex != null) forget(h.mutex);
  }

  static void forget(InterProcessMutex mutex) {
    while (mutex.isOwnedByCurrentThread()) releaseQuietly(mutex);
  }

  static void giveBack(InterProcessMutex mutex, Lease lease) {
    if (mutex != null) releaseQuietly(mutex);
    if (lease != null) {
      try {
        lease.close();
      } catch (Exception e) {
        log("lease close (cleanup) threw " + e);
      }
    }
  }

  static void releaseQuietly(InterProcessMutex mutex) {
    try {
      mutex.release();
    } catch (Exception e) {
      log("release (cleanup) threw " + e);
    }
  }

  /** The node an InterProcessMutex (or a read-write lock's side) holds: getLockPath() is protected. */
  static String lockPath(InterProcessMutex mutex) {
    try {
      return (String) GET_LOCK_PATH.invoke(mutex);
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException("InterProcessMutex.getLockPath: " + e, e);
    }
  }

  private static final Method GET_LOCK_PATH;

  static {
    try {
      GET_LOCK_PATH = InterProcessMutex.class.getDeclaredMethod("getLockPath");
      GET_LOCK_PATH.setAccessible(true);
    } catch (NoSuchMethodException e) {
      throw new ExceptionInInitializerError(e);
    }
  }
  public void shutdown() {
    CuratorFramework c = client;
    if (c == null) return;
    // Closing ends the session (its nodes go at once); never wait for it long.
    Thread t = new Thread(() -> {
      try {
        c.close();
      } catch (Throwable e) {
        log("close threw " + e);
      }
    }, "curator-close");
    t.setDaemon(true);
    t.start();
    try {
      t.join(700);
    } catch (InterruptedException ignored) {
      Thread.currentThread().interrupt();
    }
  }
}
