// What every Java adapter needs around its own lock (docs/adapter-protocol.md), as
// fencecheck_adapter.py gives a Python one: standard output kept for protocol lines,
// one whole line at a time from any thread (replies from the main thread, notices
// from a library's event thread), the reply's common fields, and the version of a
// library as the jar on the classpath names it. Compiled with fencecheck.Json into
// every pom environment that has sources: `import static fencecheck.Protocol.*;`.
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
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
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

  /** A line said on standard error, the worker's log, as `[who] line`. */
  public static void log(String who, String line) {
    System.err.println("[" + who + "] " + line);
    System.err.flush();
  }

  /** One line of input as a request; null (said on standard error) for a blank line or one that is not a JSON object. */
  public static Map<String, Object> request(String line, String who) {
    if (line.isBlank()) return null;
    try {
      Object parsed = Json.parse(line);
      if (!(parsed instanceof Map)) throw new IllegalArgumentException("not an object");
      @SuppressWarnings("unchecked")
      Map<String, Object> m = (Map<String, Object>) parsed;
      return m;
    } catch (RuntimeException e) {
      log(who, "ignoring a line that is not a JSON object (" + e.getMessage() + "): " + line);
      return null;
    }
  }

  /** An adapter whose requests are answered one at a time, in order (no cancel); each answer a reply. */
  public interface Adapter {
    Map<String, Object> init(Object id, Map<String, Object> req) throws Exception;

    Map<String, Object> acquire(Object id, Map<String, Object> req) throws Exception;

    Map<String, Object> release(Object id, Map<String, Object> req) throws Exception;

    /** Only for "renew": "explicit" adapters; the others are sent none. */
    default Map<String, Object> renew(Object id, Map<String, Object> req) throws Exception {
      return replyWith(id, "fail", "error", "renew-not-supported");
    }

    /** Let go of the library's connections (close, or end of input). */
    void shutdown();
  }

  /**
   * The protocol loop of such an adapter: each request answered in turn, an
   * exception an error reply (an unknown outcome), close and the end of input
   * the shutdown and exit.
   */
  public static void serve(Adapter a, String who) throws IOException {
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    String line;
    while ((line = in.readLine()) != null) {
      Map<String, Object> req = request(line, who);
      if (req == null) continue;
      Object id = req.get("id");
      String type = String.valueOf(req.get("type"));
      if (type.equals("close")) {
        a.shutdown();
        send(reply(id, "ok"));
        System.exit(0);
      }
      try {
        switch (type) {
          case "init": send(a.init(id, req)); break;
          case "acquire": send(a.acquire(id, req)); break;
          case "renew": send(a.renew(id, req)); break;
          case "release": send(a.release(id, req)); break;
          default: send(replyWith(id, "error", "error", "unknown request type: " + type));
        }
      } catch (Throwable t) {
        log(who, "unexpected " + t + " handling " + line);
        send(replyWith(id, "error", "error", shortError(t)));
      }
    }
    a.shutdown();
    System.exit(0);
  }

  /** What an ExecutionException or CompletionException wraps, all the way down. */
  public static Throwable root(Throwable t) {
    while ((t instanceof ExecutionException || t instanceof CompletionException) && t.getCause() != null) t = t.getCause();
    return t;
  }

  /** An error in at most 200 characters, its wrappers taken off: `Class: message`. */
  public static String shortError(Throwable t) {
    t = root(t);
    String msg = t.getMessage();
    String s = t.getClass().getSimpleName() + (msg == null ? "" : ": " + msg);
    return s.length() > 200 ? s.substring(0, 200) : s;
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
