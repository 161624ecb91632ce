// JSON for fencecheck's Java adapters: enough for the adapter protocol's lines
// (objects, arrays, strings, numbers, true/false/null), so an adapter needs no JSON
// library of its own. fencecheck compiles this package into every pom environment
// that has sources (clients/program/environment.ts), as it puts
// fencecheck_adapter.py on a Python adapter's path: `import fencecheck.Json;`.
package fencecheck;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

public final class Json {
  private final String s;
  private int i;

  private Json(String s) {
    this.s = s;
  }

  public static Object parse(String text) {
    Json p = new Json(text);
    p.ws();
    Object v = p.value();
    p.ws();
    if (p.i != p.s.length()) throw p.err("trailing characters");
    return v;
  }

  public static long num(Object v, long dflt) {
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

  public static String write(Object v) {
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
