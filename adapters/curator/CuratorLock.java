// fencecheck's reference adapter for Apache Curator's InterProcessMutex (protocol 1,
// docs/adapter-protocol.md): JSON lines on stdin, replies and notices on stdout, logs
// on stderr. One program per logical client; run.sh compiles this file once and execs
// the JVM with Debian's Curator 5.4.0, ZooKeeper 3.8 and slf4j-simple (to stderr).
//
// The lock is used as Curator's documentation says: one CuratorFramework from
// CuratorFrameworkFactory, started at init (start() does not block: it connects in the
// background), one InterProcessMutex per key path /fencecheck/locks/<key>, acquire(wait,
// MILLISECONDS), release(), and a ConnectionStateListener whose SUSPENDED, LOST and
// RECONNECTED become the protocol's notices.
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
//   and reentrant for it. A second acquire of a key this program holds is refused
//   (fail, nothing sent); a hold that was reported lost and never released is cleared
//   (mutex.release(), quietly) before the key is acquired again, so Curator's
//   reentrancy can never hand out a second hold without asking ZooKeeper.
// - acquire false: Curator deleted its queued node (a failed delete throws, and then we
//   answer error), so "timeout" is definite.
// - release: the hold's node is checked first; gone means the session that owned it
//   ended: ok released:false lost:"session-expired" (mutex.release() still clears the
//   thread's state). A connection error while deleting: error (Curator's guaranteed
//   delete goes on in the background).
// - A hold still unreleased when its key is acquired again was abandoned by the workload
//   (after an unknown outcome its new process never releases the old hold): it is
//   released first, or its node would keep the key locked for the session's whole life.
import java.io.BufferedReader;
import java.io.FileOutputStream;
import java.io.FileDescriptor;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PrintStream;
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
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.retry.RetryUntilElapsed;
import org.apache.zookeeper.data.Stat;

public final class CuratorLock {
  static final String LOCK_ROOT = "/fencecheck/locks";
  static final String LIBRARY = "Apache Curator 5.4.0 InterProcessMutex (Debian libcurator-recipes-java), ZooKeeper client 3.8";

  // ---- output: replies and notices, from the main thread and Curator's event thread ----
  private static final Object OUT_LOCK = new Object();
  private static OutputStream out;

  static void send(Map<String, Object> msg) {
    byte[] line = (Json.write(msg) + "\n").getBytes(StandardCharsets.UTF_8);
    synchronized (OUT_LOCK) {
      try {
        out.write(line);
        out.flush();
      } catch (IOException e) {
        // fencecheck has gone: nothing left to tell.
        Runtime.getRuntime().halt(0);
      }
    }
  }

  static void log(String s) {
    System.err.println("[curator-adapter] " + s);
    System.err.flush();
  }

  static Map<String, Object> reply(Object id, String type) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("in_reply_to", id);
    m.put("type", type);
    return m;
  }

  static Map<String, Object> replyWith(Object id, String type, String field, Object value) {
    Map<String, Object> m = reply(id, type);
    m.put(field, value);
    return m;
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

    String lockPath() {
      return getLockPath();
    }
  }

  static final class Hold {
    final String key, owner, node;
    final long fence, session;
    volatile boolean lost;
    /** Its ok has been sent: a lost notice may name it. */
    volatile boolean announced;
    volatile String lostWhy;

    Hold(String key, String owner, String node, long fence, long session) {
      this.key = key;
      this.owner = owner;
      this.node = node;
      this.fence = fence;
      this.session = session;
    }
  }

  // ---- state ----
  private CuratorFramework client;
  private String ownerPrefix = "c";
  private int holdCount = 0;
  private final Map<String, FencedMutex> mutexes = new ConcurrentHashMap<>();
  /** Counts LOST states; a hold granted across one is checked after its ok is sent. */
  private volatile long lostEpoch = 0;
  private Hold justGranted;
  private long justGrantedEpoch;
  /** key -> the hold this program has on it (one hold a key at most). */
  private final Map<String, Hold> holds = new ConcurrentHashMap<>();

  public static void main(String[] args) throws Exception {
    // Standard output carries messages only: keep it for ourselves and send anything a
    // library prints there to standard error.
    out = new FileOutputStream(FileDescriptor.out);
    PrintStream err = new PrintStream(new FileOutputStream(FileDescriptor.err), true, StandardCharsets.UTF_8);
    System.setErr(err);
    System.setOut(err);
    new CuratorLock().run();
  }

  void run() throws Exception {
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    String line;
    while ((line = in.readLine()) != null) {
      if (line.isBlank()) continue;
      Map<String, Object> req;
      try {
        Object parsed = Json.parse(line);
        if (!(parsed instanceof Map)) throw new IllegalArgumentException("not an object");
        @SuppressWarnings("unchecked")
        Map<String, Object> m = (Map<String, Object>) parsed;
        req = m;
      } catch (RuntimeException e) {
        log("ignoring a line that is not a JSON object (" + e.getMessage() + "): " + line);
        continue;
      }
      Object id = req.get("id");
      String type = String.valueOf(req.get("type"));
      try {
        switch (type) {
          case "init": send(init(id, req)); break;
          case "acquire":
            send(acquire(id, req));
            afterAcquire();
            break;
          case "renew":
            // Session-based: the manifest says renew "none", so none is sent. Certainly not extended.
            send(replyWith(id, "fail", "error", "renew-not-supported"));
            break;
          case "release": send(release(id, req)); break;
          case "close":
            shutdown();
            send(reply(id, "ok"));
            System.exit(0);
            break;
          default:
            send(replyWith(id, "error", "error", "unknown request type: " + type));
        }
      } catch (Throwable t) {
        log("unexpected " + t + " handling " + line);
        t.printStackTrace();
        send(replyWith(id, "error", "error", shortError(t)));
      }
    }
    // End of input means close.
    shutdown();
    System.exit(0);
  }

  // ---- init ----
  Map<String, Object> init(Object id, Map<String, Object> req) {
    if (client != null) return replyWith(id, "error", "error", "init sent twice");
    long protocol = Json.num(req.get("protocol"), 1);
    if (protocol < 1) return replyWith(id, "error", "error", "protocol " + protocol + " not spoken (this adapter speaks 1)");
    Object prefix = req.get("owner_prefix");
    if (prefix instanceof String) ownerPrefix = (String) prefix;
    int ttlMs = (int) Json.num(req.get("ttl_ms"), 1000);
    int commandTimeoutMs = (int) Json.num(req.get("command_timeout_ms"), 3000);
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
          Map<String, Object> m = new LinkedHashMap<>();
          m.put("type", "lost");
          m.put("key", h.key);
          m.put("owner", h.owner);
          send(m);
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
  Map<String, Object> acquire(Object id, Map<String, Object> req) {
    if (client == null) return replyWith(id, "fail", "error", "no init");
    String key = String.valueOf(req.get("key"));
    long waitMs = Math.max(0, Json.num(req.get("wait_ms"), 0));
    FencedMutex mutex = mutex(key);
    Hold old = holds.get(key);
    if (old != null && !old.lost) {
      // Still ours, unreleased: the workload abandoned it (a process whose operation had
      // an unknown outcome never releases its hold; both workloads hold one lock at a
      // time). Curator would reenter it without asking ZooKeeper, and the node would
      // keep the key locked for as long as our session lives: release it first.
      log("acquire " + key + ": releasing " + old.owner + " (" + old.node + "), abandoned without a release");
      holds.remove(key, old);
      try {
        mutex.release();
      } catch (IllegalMonitorStateException e) {
        // Curator had already forgotten it.
      } catch (Exception e) {
        // Its guaranteed delete goes on in the background. Nothing of this acquire was sent.
        return replyWith(id, "fail", "error", "previous hold not released: " + shortError(e));
      }
    } else if (old != null) {
      forget(key, mutex, old);
    }
    if (mutex.isOwnedByCurrentThread()) {
      // Should not happen (every hold is in `holds`): clear it rather than reenter.
      forget(key, mutex, null);
    }
    String owner = ownerPrefix + "-h" + (++holdCount);
    mutex.setNodeData(owner);
    boolean got;
    long t0 = System.nanoTime();
    try {
      got = mutex.acquire(waitMs, TimeUnit.MILLISECONDS);
    } catch (Exception e) {
      // Unknown: the node may have been made and granted. Curator's protected mode
      // deletes a node whose create got no answer, in the background.
      log("acquire " + key + " threw " + e);
      return replyWith(id, "error", "error", shortError(e));
    }
    long queuedMs = (System.nanoTime() - t0) / 1_000_000;
    if (!got) {
      // Curator deleted our queued node before returning false (a delete that fails throws).
      return replyWith(id, "fail", "error", "timeout");
    }
    String node = mutex.lockPath();
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
      releaseQuietly(mutex);
      return replyWith(id, "error", "error", "granted but fence unreadable: " + shortError(e));
    }
    if (stat == null) {
      // Curator said it holds, but the node is already gone: its session ended (the race
      // of CURATOR-604 looks like this). The hold is worth nothing; say we cannot know.
      log("acquire " + key + ": Curator granted " + node + " but the node is gone (session ended): CURATOR-604-like");
      releaseQuietly(mutex);
      return replyWith(id, "error", "error", "granted-node-gone");
    }
    boolean foreign = stat.getEphemeralOwner() != session;
    if (foreign) {
      log("acquire " + key + ": node " + node + " belongs to session 0x" + Long.toHexString(stat.getEphemeralOwner())
          + ", ours is 0x" + Long.toHexString(session) + " (a node of an ended session: CURATOR-604-like)");
    }
    Hold h = new Hold(key, owner, node, stat.getCzxid(), stat.getEphemeralOwner());
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
   * A LOST that came after the stat of a new hold, before its ok was sent, named no hold
   * (the listener names only holds whose ok is out: a notice about an owner not yet granted
   * would be about nobody): name it now.
   */
  void afterAcquire() {
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
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("type", "lost");
    m.put("key", h.key);
    m.put("owner", h.owner);
    send(m);
  }

  // ---- release ----
  Map<String, Object> release(Object id, Map<String, Object> req) {
    if (client == null) return replyWith(id, "fail", "error", "no init");
    String key = String.valueOf(req.get("key"));
    Object owner = req.get("owner");
    Hold h = holds.get(key);
    FencedMutex mutex = mutexes.get(key);
    if (h == null || mutex == null || (owner != null && !owner.equals(h.owner))) {
      // Nothing was sent: this program holds no such hold.
      return replyWith(id, "fail", "error", "not-owner");
    }
    if (h.lost) {
      forget(key, mutex, h);
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
      forget(key, mutex, h);
      Map<String, Object> r = replyWith(id, "ok", "released", false);
      r.put("lost", "session-expired");
      return r;
    }
    holds.remove(key);
    try {
      mutex.release();
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
  void forget(String key, FencedMutex mutex, Hold h) {
    if (h != null) holds.remove(key, h);
    while (mutex.isOwnedByCurrentThread()) releaseQuietly(mutex);
  }

  static void releaseQuietly(InterProcessMutex mutex) {
    try {
      mutex.release();
    } catch (Exception e) {
      log("release (cleanup) threw " + e);
    }
  }

  void shutdown() {
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

  static String shortError(Throwable t) {
    String name = t.getClass().getSimpleName();
    String msg = t.getMessage();
    String s = msg == null ? name : name + ": " + msg;
    return s.length() > 200 ? s.substring(0, 200) : s;
  }

  // ---- JSON: enough for this protocol (objects, arrays, strings, numbers, true/false/null) ----
  static final class Json {
    private final String s;
    private int i;

    private Json(String s) {
      this.s = s;
    }

    static Object parse(String text) {
      Json p = new Json(text);
      p.ws();
      Object v = p.value();
      p.ws();
      if (p.i != p.s.length()) throw p.err("trailing characters");
      return v;
    }

    static long num(Object v, long dflt) {
      if (v instanceof Long) return (Long) v;
      if (v instanceof Double) return (long) (double) (Double) v;
      return dflt;
    }

    private RuntimeException err(String what) {
      return new IllegalArgumentException(what + " at " + i);
    }

    private void ws() {
      while (i < s.length()) {
        char c = s.charAt(i);
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r') i++;
        else break;
      }
    }

    private Object value() {
      if (i >= s.length()) throw err("unexpected end");
      char c = s.charAt(i);
      switch (c) {
        case '{': return object();
        case '[': return array();
        case '"': return string();
        case 't': return literal("true", Boolean.TRUE);
        case 'f': return literal("false", Boolean.FALSE);
        case 'n': return literal("null", null);
        default:
          if (c == '-' || (c >= '0' && c <= '9')) return number();
          throw err("unexpected '" + c + "'");
      }
    }

    private Object literal(String word, Object v) {
      if (!s.startsWith(word, i)) throw err("bad literal");
      i += word.length();
      return v;
    }

    private Map<String, Object> object() {
      Map<String, Object> m = new LinkedHashMap<>();
      i++;
      ws();
      if (i < s.length() && s.charAt(i) == '}') {
        i++;
        return m;
      }
      for (;;) {
        ws();
        if (i >= s.length() || s.charAt(i) != '"') throw err("expected a key");
        String k = string();
        ws();
        if (i >= s.length() || s.charAt(i) != ':') throw err("expected ':'");
        i++;
        ws();
        m.put(k, value());
        ws();
        if (i >= s.length()) throw err("unexpected end");
        char c = s.charAt(i++);
        if (c == '}') return m;
        if (c != ',') throw err("expected ',' or '}'");
      }
    }

    private List<Object> array() {
      List<Object> l = new ArrayList<>();
      i++;
      ws();
      if (i < s.length() && s.charAt(i) == ']') {
        i++;
        return l;
      }
      for (;;) {
        ws();
        l.add(value());
        ws();
        if (i >= s.length()) throw err("unexpected end");
        char c = s.charAt(i++);
        if (c == ']') return l;
        if (c != ',') throw err("expected ',' or ']'");
      }
    }

    private String string() {
      StringBuilder b = new StringBuilder();
      i++;
      for (;;) {
        if (i >= s.length()) throw err("unterminated string");
        char c = s.charAt(i++);
        if (c == '"') return b.toString();
        if (c < 0x20) throw err("control character in string");
        if (c != '\\') {
          b.append(c);
          continue;
        }
        if (i >= s.length()) throw err("unterminated escape");
        char e = s.charAt(i++);
        switch (e) {
          case '"': b.append('"'); break;
          case '\\': b.append('\\'); break;
          case '/': b.append('/'); break;
          case 'b': b.append('\b'); break;
          case 'f': b.append('\f'); break;
          case 'n': b.append('\n'); break;
          case 'r': b.append('\r'); break;
          case 't': b.append('\t'); break;
          case 'u':
            if (i + 4 > s.length()) throw err("short \\u escape");
            try {
              b.append((char) Integer.parseInt(s.substring(i, i + 4), 16));
            } catch (NumberFormatException x) {
              throw err("bad \\u escape");
            }
            i += 4;
            break;
          default: throw err("bad escape");
        }
      }
    }

    private Object number() {
      int start = i;
      if (s.charAt(i) == '-') i++;
      boolean integral = true;
      while (i < s.length()) {
        char c = s.charAt(i);
        if (c >= '0' && c <= '9') i++;
        else if (c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-') {
          integral = false;
          i++;
        } else break;
      }
      String t = s.substring(start, i);
      try {
        if (integral) return Long.parseLong(t);
        return Double.parseDouble(t);
      } catch (NumberFormatException x) {
        if (integral) {
          try {
            return Double.parseDouble(t); // beyond a long
          } catch (NumberFormatException y) {
            // fall through
          }
        }
        throw err("bad number '" + t + "'");
      }
    }

    static String write(Object v) {
      StringBuilder b = new StringBuilder();
      write(b, v);
      return b.toString();
    }

    private static void write(StringBuilder b, Object v) {
      if (v == null) b.append("null");
      else if (v instanceof String) quote(b, (String) v);
      else if (v instanceof Boolean || v instanceof Long || v instanceof Integer) b.append(v);
      else if (v instanceof Double) {
        double d = (Double) v;
        if (Double.isFinite(d)) b.append(d == Math.rint(d) && Math.abs(d) < 1e15 ? Long.toString((long) d) : Double.toString(d));
        else b.append("null");
      } else if (v instanceof Map) {
        b.append('{');
        boolean first = true;
        for (Map.Entry<?, ?> e : ((Map<?, ?>) v).entrySet()) {
          if (!first) b.append(',');
          first = false;
          quote(b, String.valueOf(e.getKey()));
          b.append(':');
          write(b, e.getValue());
        }
        b.append('}');
      } else if (v instanceof List) {
        b.append('[');
        boolean first = true;
        for (Object o : (List<?>) v) {
          if (!first) b.append(',');
          first = false;
          write(b, o);
        }
        b.append(']');
      } else quote(b, String.valueOf(v));
    }

    private static void quote(StringBuilder b, String s) {
      b.append('"');
      for (int k = 0; k < s.length(); k++) {
        char c = s.charAt(k);
        switch (c) {
          case '"': b.append("\\\""); break;
          case '\\': b.append("\\\\"); break;
          case '\n': b.append("\\n"); break;
          case '\r': b.append("\\r"); break;
          case '\t': b.append("\\t"); break;
          case '\b': b.append("\\b"); break;
          case '\f': b.append("\\f"); break;
          default:
            if (c < 0x20 || c == 0x2028 || c == 0x2029) b.append(String.format("\\u%04x", (int) c));
            else b.append(c);
        }
      }
      b.append('"');
    }
  }
}
