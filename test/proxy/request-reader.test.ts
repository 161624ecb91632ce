// The HTTP request reader behind block_from, on its own: which sender each
// request names, that every byte comes out once and in order, and that what it
// cannot follow passes untouched.
import { describe, expect, it } from "vitest";
import { RequestReader, type Step } from "../../proxy/request-reader.ts";

/** Feed `parts` one at a time; return the senders seen and the bytes forwarded. */
function read(parts: string[], end = false): { senders: Array<string | null>; out: string; held: number } {
  const r = new RequestReader();
  const senders: Array<string | null> = [];
  let out = "";
  const drain = (): void => {
    for (let s: Step = r.next(); s.kind !== "wait"; s = r.next()) {
      if (s.kind === "sender") senders.push(s.from);
      else out += s.bytes.toString("latin1");
    }
  };
  for (const p of parts) {
    r.push(Buffer.from(p, "latin1"));
    drain();
  }
  if (end) {
    r.end();
    drain();
  }
  return { senders, out, held: r.held };
}

const req = (from?: string, extra = ""): string => `GET /x HTTP/1.1\r\nHost: h\r\n${from ? `X-Server-From: ${from}\r\n` : ""}${extra}\r\n`;

describe("RequestReader", () => {
  it("names the sender of every request and forwards every byte once, in order", () => {
    const body = "0123456789";
    const stream = [req("a"), req(), `POST /p HTTP/1.1\r\nX-Server-From: b\r\nContent-Length: ${body.length}\r\n\r\n${body}`, "\r\n", req("c")].join("");
    // Fed whole and fed a byte at a time, the result is the same.
    for (const parts of [[stream], [...stream]]) {
      const { senders, out, held } = read(parts);
      expect(senders).toEqual(["a", null, "b", "c"]);
      expect(out).toBe(stream);
      expect(held).toBe(0);
    }
  });

  it("holds an incomplete head, and lets it go as it is when the client ends", () => {
    const partial = "GET /x HTTP/1.1\r\nX-Server-From: a";
    expect(read([partial])).toEqual({ senders: [], out: "", held: partial.length });
    expect(read([partial], true)).toEqual({ senders: [], out: partial, held: 0 });
  });

  it("follows a chunked body to the next request", () => {
    const chunked = `POST /p HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\n${req("fake").slice(0, 5)}\r\n0\r\nTrailer: x\r\n\r\n`;
    const { senders, out } = read([...chunked, req("real")]);
    expect(senders).toEqual([null, "real"]);
    expect(out).toBe(chunked + req("real"));
  });

  it("passes non-HTTP bytes untouched from the first byte", () => {
    for (const raw of ["*1\r\n$4\r\nPING\r\n", "PING\r\n", "GET key\r\n", "\u0016\u0003\u0001"]) {
      const { senders, out } = read([raw, req("a")]);
      expect(senders).toEqual([]);
      expect(out).toBe(raw + req("a"));
    }
  });

  it("stops reading after what it cannot follow: HTTP/2 preface, Upgrade, a body without length", () => {
    const preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
    expect(read([preface + req("a")]).senders).toEqual([null]);
    expect(read([req("u", "Upgrade: websocket\r\n") + req("a")]).senders).toEqual(["u"]);
    expect(read([req("g", "Transfer-Encoding: gzip\r\n") + req("a")]).senders).toEqual(["g"]);
    const badLength = read([req("l", "Content-Length: nope\r\n") + req("a")]);
    expect(badLength.senders).toEqual(["l"]);
    expect(badLength.out).toBe(req("l", "Content-Length: nope\r\n") + req("a"));
  });

  it("gives up on a head past 64 KiB rather than hold it", () => {
    const huge = `GET /x HTTP/1.1\r\nX-Pad: ${"p".repeat(70_000)}`;
    const { out, held } = read([huge]);
    expect(out).toBe(huge);
    expect(held).toBe(0);
  });
});
