// What every Java adapter needs around its own lock (docs/adapter-protocol.md), as
// fencecheck_adapter.py gives a Python one: standard output kept for protocol lines,
// one whole line at a time from any thread (replies from the main thread, notices
// from a library's event thread), the reply's common fields, the version of a
// library as the jar on the classpath names it, and the request loop: serve (one
// request at a time) or, for an adapter that can cancel a wait, serveCancellable
// (requests read on a thread of their own, a cancel answered while the main thread
// waits in its lock call, Cancels telling which acquire to withdraw and how).
// Compiled with fencecheck.Json into every pom environment that has sources:
// `import static fencecheck.Protocol.*;`.
package fencecheck;

import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

public final class Protocol {
  private Protocol() {}

  private static final Object OUT_LOCK = new Object();
  private static OutputStream out;

  /**
   * Takes standard output for the protocol and points System.out at standard error,
   * so that a library's print cannot corrupt the stream. First thing in main.
   */
  public static void takeStdout() {
    out = new FileOutputStream(FileDescriptor.out);
    PrintStream err = new PrintStream(new FileOutputStream(FileDescriptor.err), true, StandardCharsets.UTF_8);
    System.setErr(err);
    System.setOut(err);
  }

  /**
   * A request line as a JSON object, or null when it is not one (said on standard error,
   * the worker's log, and otherwise ignored: there is no id to answer).
   */
  public static Map<String, Object> parseRequest(String line) {
    try {
      Object parsed = Json.parse(line);
      if (!(parsed instanceof Map)) throw new IllegalArgumentException("not an object");
      @SuppressWarnings("unchecked")
      Map<String, Object> m = (Map<String, Object>) parsed;
      return m;
    } catch (RuntimeException e) {
      System.err.println("[fencecheck adapter] ignoring a line that is not a JSON object (" + e.getMessage() + "): " + line);
      System.err.flush();
      return null;
    }
  }

  /** What an adapter that answers one request at a time does with each (serve's loop). */
  public interface Handler {
    /** The reply to init, acquire, renew or release; null for a type it does not know. */
    Map<String, Object> handle(Object id, String type, Map<String, Object> req) throws Exception;

    /** Let go of the library's connections: at close, and at the end of input. */
    void shutdown();

  }

  /**
   * A Handler whose requests are init, acquire, renew and release, a method each:
   * the dispatch written once. renew answers "renew-not-supported" unless the
   * adapter's manifest says "renew": "explicit" and it overrides it (fencecheck
   * sends the others none).
   */
  public interface LockHandler extends Handler {
    Map<String, Object> init(Object id, Map<String, Object> req) throws Exception;

    Map<String, Object> acquire(Object id, Map<String, Object> req) throws Exception;

    Map<String, Object> release(Object id, Map<String, Object> req) throws Exception;

    default Map<String, Object> renew(Object id, Map<String, Object> req) throws Exception {
      return replyWith(id, "fail", "error", "renew-not-supported");
    }

    @Override
    default Map<String, Object> handle(Object id, String type, Map<String, Object> req) throws Exception {
      switch (type) {
        case "init": return init(id, req);
        case "acquire": return acquire(id, req);
        case "renew": return renew(id, req);
        case "release": return release(id, req);
        default: return null;
      }
    }
  }

  /** A lock call that a cancel may withdraw. */
  public interface LockCall<T> {
    T run() throws Exception;
  }

  /** A lock call that a cancel came for before it started: nothing was sent. */
  public static final class NotSent extends Exception {
    public NotSent() {
      super("cancelled before it was sent", null, false, false);
    }
  }

  /**
   * Which acquires are outstanding, which a cancel came for, and how to withdraw the one
   * waiting now: shared by the reading thread (cancel, answered at once) and the main
   * thread (the lock call), as docs/adapter-protocol.md's "cancel" asks.
   */
  public static final class Cancels {
    /** Acquires read and not yet answered, and those of them a cancel came for. */
    private final java.util.Set<Object> outstanding = new java.util.HashSet<>();
    private final java.util.Set<Object> asked = new java.util.HashSet<>();
    /** The acquire whose lock call runs now, and how its cancel withdraws it. */
    private Object waitingId;
    private Runnable withdraw;

    synchronized void read(Object acquireId) {
      outstanding.add(acquireId);
    }

    synchronized void answered(Object acquireId) {
      outstanding.remove(acquireId);
      asked.remove(acquireId);
    }

    /** On the reading thread: withdraw the acquire `acquireId`, by the way its lock call gave. */
    synchronized Map<String, Object> cancel(Object id, Object acquireId) {
      // Already answered (its reply crossed the cancel): that reply stands.
      if (!outstanding.contains(acquireId)) return replyWith(id, "error", "error", "no such acquire waiting");
      asked.add(acquireId);
      // Not yet in its lock call: it sees `asked` before it sends anything.
      if (acquireId.equals(waitingId) && withdraw != null) withdraw.run();
      return reply(id, "ok");
    }

    public synchronized boolean asked(Object acquireId) {
      return asked.contains(acquireId);
    }

    /**
     * Runs the acquire `id`'s lock call, which its cancel withdraws by `withdraw` (run on
     * the reading thread: it must not block). NotSent when the cancel came first.
     */
    public <T> T during(Object id, Runnable withdraw, LockCall<T> call) throws Exception {
      synchronized (this) {
        if (asked.contains(id)) throw new NotSent();
        waitingId = id;
        this.withdraw = withdraw;
      }
      try {
        return call.run();
      } finally {
        synchronized (this) {
          waitingId = null;
          this.withdraw = null;
        }
      }
    }
  }

  /** A LockHandler whose acquires a cancel may withdraw (manifest kinds "cancel": true). */
  public interface CancellableHandler extends LockHandler {
    Cancels cancels();

    /** On the main thread, after an acquire's reply is sent (a check that needs it out first). */
    default void afterAcquire() {}
  }

  /**
   * The protocol loop of an adapter that can cancel: requests are read on a thread of
   * their own and handled in order on the main thread, except a cancel, which comes while
   * the main thread waits in an acquire and is answered at once on the reading thread.
   */
  public static void serveCancellable(CancellableHandler h) throws Exception {
    Cancels cancels = h.cancels();
    java.util.concurrent.BlockingQueue<Map<String, Object>> requests = new java.util.concurrent.LinkedBlockingQueue<>();
    Map<String, Object> endOfInput = new LinkedHashMap<>();
    Thread reader = new Thread(() -> {
      BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
      try {
        String line;
        while ((line = in.readLine()) != null) {
          if (line.isBlank()) continue;
          Map<String, Object> req = parseRequest(line);
          if (req == null) continue;
          Object type = req.get("type");
          if ("cancel".equals(type)) {
            send(cancels.cancel(req.get("id"), req.get("acquire")));
            continue;
          }
          if ("acquire".equals(type)) cancels.read(req.get("id"));
          requests.add(req);
        }
      } catch (IOException e) {
        System.err.println("[fencecheck adapter] reading requests: " + e);
        System.err.flush();
      }
      requests.add(endOfInput);
    }, "requests");
    reader.setDaemon(true);
    reader.start();
    for (;;) {
      Map<String, Object> req = requests.take();
      if (req == endOfInput) break;
      answer(h, req);
    }
    // End of input means close.
    h.shutdown();
    System.exit(0);
  }

  /**
   * The protocol loop of an adapter that answers one request at a time, on the main
   * thread: read a line, answer it; close (or the end of input) shuts down and exits.
   * An exception the handler did not expect is an error reply (an unknown outcome).
   * An adapter that reads while it waits (cancel) uses serveCancellable.
   */
  public static void serve(Handler h) throws IOException {
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    String line;
    while ((line = in.readLine()) != null) {
      if (line.isBlank()) continue;
      Map<String, Object> req = parseRequest(line);
      if (req != null) answer(h, req);
    }
    h.shutdown();
    System.exit(0);
  }

  /**
   * One request, on the main thread: close shuts down, answers and exits; any other is
   * handled and answered. An exception the handler did not expect is an error reply (an
   * unknown outcome). A cancellable handler's acquire is no longer outstanding once handled.
   */
  private static void answer(Handler h, Map<String, Object> req) {
    Object id = req.get("id");
    String type = String.valueOf(req.get("type"));
    CancellableHandler cancellable = type.equals("acquire") && h instanceof CancellableHandler c ? c : null;
    try {
      if (type.equals("close")) {
        h.shutdown();
        send(reply(id, "ok"));
        System.exit(0);
      }
      Map<String, Object> r;
      try {
        r = h.handle(id, type, req);
      } finally {
        if (cancellable != null) cancellable.cancels().answered(id);
      }
      send(r != null ? r : replyWith(id, "error", "error", "unknown request type: " + type));
      if (cancellable != null) cancellable.afterAcquire();
    } catch (Throwable t) {
      System.err.println("[fencecheck adapter] unexpected " + t + " handling " + Json.write(req));
      t.printStackTrace();
      System.err.flush();
      send(replyWith(id, "error", "error", shortError(t)));
    }
  }

  /**
   * An exception as the short phrase of an error reply: the cause a future wrapped it in
   * (a library's async call), its class and message on one line, 200 characters at most.
   */
  public static String shortError(Throwable t) {
    while ((t instanceof java.util.concurrent.ExecutionException || t instanceof java.util.concurrent.CompletionException) && t.getCause() != null) t = t.getCause();
    String msg = t.getMessage();
    String s = t.getClass().getSimpleName() + (msg == null ? "" : ": " + msg.replace('\n', ' '));
    return s.length() > 200 ? s.substring(0, 200) : s;
  }

  /** What init says to an adapter of a one-server lock: its first endpoint, its owner prefix, ttl and command timeout. */
  public record Init(String host, int port, String ownerPrefix, long ttlMs, int commandTimeoutMs) {
    @SuppressWarnings("unchecked")
    public static Init of(Map<String, Object> req, int defaultPort) {
      Map<String, Object> ep = (Map<String, Object>) ((java.util.List<Object>) req.get("endpoints")).get(0);
      return new Init(
          String.valueOf(ep.get("host")),
          (int) Json.num(ep.get("port"), defaultPort),
          String.valueOf(req.getOrDefault("owner_prefix", "c")),
          Json.num(req.get("ttl_ms"), 30000),
          (int) Json.num(req.get("command_timeout_ms"), 3000));
    }
  }

  /** Every endpoint init names, as host:port (an IPv6 host in brackets), in init's order: a lock over several servers. */
  @SuppressWarnings("unchecked")
  public static java.util.List<String> addresses(Map<String, Object> req, int defaultPort) {
    java.util.List<String> out = new java.util.ArrayList<>();
    for (Object e : (java.util.List<Object>) req.get("endpoints")) {
      Map<String, Object> ep = (Map<String, Object>) e;
      String host = String.valueOf(ep.get("host"));
      if (host.contains(":") && !host.startsWith("[")) host = "[" + host + "]";
      out.add(host + ":" + Json.num(ep.get("port"), defaultPort));
    }
    return out;
  }

  /** init_ok, as the manifest says (fences, renew), with the library that runs. */
  public static Map<String, Object> initOk(Object id, boolean fences, String renew, String library) {
    Map<String, Object> r = reply(id, "init_ok");
    r.put("fences", fences);
    r.put("renew", renew);
    r.put("library", library);
    return r;
  }

  /** init_ok with the lock kinds it offers, as the manifest says them ("kinds"). */
  public static Map<String, Object> initOk(Object id, boolean fences, String renew, String library, Map<String, Object> kinds) {
    Map<String, Object> r = initOk(id, fences, renew, library);
    if (!kinds.isEmpty()) r.put("kinds", kinds);
    return r;
  }

  /** One message, one line, whole. */
  public static void send(Map<String, Object> msg) {
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

  /** A `lost` notice (docs/adapter-protocol.md): the hold of `owner` on `key` is gone, by the library's word. */
  public static void sendLost(String key, String owner) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("type", "lost");
    m.put("key", key);
    m.put("owner", owner);
    send(m);
  }

  public static Map<String, Object> reply(Object id, String type) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("in_reply_to", id);
    m.put("type", type);
    return m;
  }

  public static Map<String, Object> replyWith(Object id, String type, String field, Object value) {
    Map<String, Object> m = reply(id, type);
    m.put(field, value);
    return m;
  }

  /** A reply with one more field. */
  public static Map<String, Object> replyWith(Map<String, Object> r, String field, Object value) {
    r.put(field, value);
    return r;
  }

  /** The version in a jar's file name on the classpath (curator-recipes-5.9.0.jar), or "unknown": the one that runs, not the one a comment says. */
  public static String jarVersion(String artifact) {
    Pattern named = Pattern.compile("(?:^|/)" + Pattern.quote(artifact) + "-(\\d[^/]*)\\.jar$");
    for (String entry : System.getProperty("java.class.path", "").split(java.io.File.pathSeparator)) {
      Matcher m = named.matcher(entry);
      if (m.find()) return m.group(1);
    }
    return "unknown";
  }
}
