// What every Java adapter needs around its own lock (docs/adapter-protocol.md), as
// fencecheck_adapter.py gives a Python one: standard output kept for protocol lines,
// one whole line at a time from any thread (replies from the main thread, notices
// from a library's event thread), the reply's common fields, and the version of a
// library as the jar on the classpath names it. Compiled with fencecheck.Json into
// every pom environment that has sources: `import static fencecheck.Protocol.*;`.
package fencecheck;

import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
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
