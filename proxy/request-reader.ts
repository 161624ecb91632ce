// Who is calling, request by request. etcd members put `X-Server-From: <member id>`
// on the requests they send a peer, but not on all of them: probes
// (/raft/probing), /version and /members go without, and Go's HTTP client reuses
// an idle keep-alive connection for whatever request comes next. Judging a
// connection by its first request therefore lets a blocked member's raft traffic
// through on a connection a probe opened (seen with etcd 3.4). So the client's
// byte stream is read as a sequence of HTTP/1.x requests, each head is held until
// it is complete, and the sender it names is reported before the head goes on.
//
// Bodies (Content-Length or chunked) pass as they come. Anything that does not
// look like HTTP (Redis' RESP, say) is recognised from its first bytes and passes
// untouched from then on; so does everything after an Upgrade, CONNECT or an
// HTTP/2 preface, which this reader cannot follow.

export type Step =
  | { kind: "forward"; bytes: Buffer }
  /** A request head is complete (and not yet forwarded): the X-Server-From it carries, or null. */
  | { kind: "sender"; from: string | null }
  | { kind: "wait" };

// Far more than any etcd request head; past it we stop reading rather than hold.
const HEAD_LIMIT = 64 << 10;
const METHOD_PREFIX = /^[A-Z]{0,20}$/;
const REQUEST_LINE = /^([A-Z]{1,20}) \S+ HTTP\/\d(?:\.\d)?\r?$/;
const WAIT: Step = { kind: "wait" };

type Mode = "head" | "body" | "chunked" | "raw";
type ChunkPart = "size" | "data" | "data-end" | "trailer";

export class RequestReader {
  private buf: Buffer = Buffer.alloc(0);
  private mode: Mode = "head";
  /** Head bytes judged and ready to forward. */
  private headReady = 0;
  private bodyLeft = 0;
  private after: Mode = "head";
  private chunkPart: ChunkPart = "size";
  private chunkLine = "";
  private ended = false;

  push(data: Buffer): void {
    this.buf = this.buf.length === 0 ? data : Buffer.concat([this.buf, data]);
  }

  /** The client sent its last byte: whatever is held goes on as it is. */
  end(): void {
    this.ended = true;
  }

  /** Read no more: what is held, and all that follows, passes as it is. */
  passRaw(): void {
    this.mode = "raw";
    this.headReady = 0;
  }

  /** Bytes read but not yet forwarded. */
  get held(): number {
    return this.buf.length;
  }

  next(): Step {
    if (this.buf.length === 0) return WAIT;
    if (this.headReady > 0) {
      const n = this.headReady;
      this.headReady = 0;
      this.mode = this.after;
      return this.forward(n);
    }
    switch (this.mode) {
      case "raw":
        return this.forward(this.buf.length);
      case "body": {
        const n = Math.min(this.bodyLeft, this.buf.length);
        this.bodyLeft -= n;
        if (this.bodyLeft === 0) this.mode = "head";
        return this.forward(n);
      }
      case "chunked":
        return this.forward(this.scanChunked());
      case "head":
        return this.readHead();
    }
  }

  private forward(n: number): Step {
    const bytes = this.buf.subarray(0, n);
    this.buf = this.buf.subarray(n);
    return { kind: "forward", bytes };
  }

  private toRaw(): Step {
    this.mode = "raw";
    return this.forward(this.buf.length);
  }

  private readHead(): Step {
    // Empty lines between requests are allowed (RFC 9112 §2.2); pass them on.
    let lead = 0;
    while (lead < this.buf.length && (this.buf[lead] === 0x0d || this.buf[lead] === 0x0a)) lead++;
    if (lead > 0) return this.forward(lead);

    const text = this.buf.toString("latin1", 0, Math.min(this.buf.length, HEAD_LIMIT));
    // A method is a short upper-case token and a space; anything else is not HTTP.
    const space = text.indexOf(" ");
    if (space === 0 || !METHOD_PREFIX.test(space < 0 ? text.slice(0, 21) : text.slice(0, space))) return this.toRaw();
    const lineEnd = text.indexOf("\n");
    if (lineEnd >= 0 && !REQUEST_LINE.test(text.slice(0, lineEnd))) return this.toRaw();
    const headEnd = findHeadEnd(text);
    if (headEnd === null) return this.ended || text.length >= HEAD_LIMIT ? this.toRaw() : WAIT;

    const head = parseHead(text.slice(0, headEnd.at));
    if (!head) return this.toRaw();
    this.headReady = headEnd.at + headEnd.length;
    this.after = head.next;
    if (head.next === "body") this.bodyLeft = head.contentLength;
    if (head.next === "chunked") {
      this.chunkPart = "size";
      this.chunkLine = "";
    }
    return { kind: "sender", from: head.from };
  }

  /** Walk chunked framing over what is buffered; every byte of it is body, to forward. */
  private scanChunked(): number {
    let i = 0;
    const b = this.buf;
    while (i < b.length && this.mode === "chunked") {
      if (this.chunkPart === "data") {
        const n = Math.min(this.bodyLeft, b.length - i);
        i += n;
        this.bodyLeft -= n;
        if (this.bodyLeft === 0) this.chunkPart = "data-end";
        continue;
      }
      const c = b[i++]!;
      if (c !== 0x0a) {
        if (this.chunkLine.length < 1024) this.chunkLine += String.fromCharCode(c);
        continue;
      }
      const line = this.chunkLine.replace(/\r$/, "");
      this.chunkLine = "";
      if (this.chunkPart === "data-end") {
        this.chunkPart = "size";
      } else if (this.chunkPart === "size") {
        const size = parseInt(line.split(";")[0]!.trim(), 16);
        if (!Number.isFinite(size) || size < 0) {
          this.mode = "raw";
          return b.length;
        }
        if (size === 0) this.chunkPart = "trailer";
        else {
          this.chunkPart = "data";
          this.bodyLeft = size;
        }
      } else if (line === "") {
        this.mode = "head"; // the empty line after the trailers ends the body
      }
    }
    return i;
  }
}

function findHeadEnd(text: string): { at: number; length: number } | null {
  const crlf = text.indexOf("\r\n\r\n");
  const lf = text.indexOf("\n\n");
  if (crlf < 0 && lf < 0) return null;
  if (lf < 0 || (crlf >= 0 && crlf < lf)) return { at: crlf, length: 4 };
  return { at: lf, length: 2 };
}

function parseHead(head: string): { from: string | null; next: Mode; contentLength: number } | null {
  const lines = head.split(/\r?\n/);
  const method = REQUEST_LINE.exec(lines[0]!)?.[1];
  if (!method) return null;
  let from: string | null = null;
  let contentLength: number | undefined;
  let badLength = false;
  let transferEncoding: string | undefined;
  let upgrade = false;
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(":");
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    if (name === "x-server-from") from ??= value || null;
    else if (name === "content-length") {
      const n = /^\d+$/.test(value) ? Number(value) : NaN;
      if (Number.isNaN(n) || (contentLength !== undefined && contentLength !== n)) badLength = true;
      contentLength = n;
    } else if (name === "transfer-encoding") transferEncoding = (transferEncoding ? `${transferEncoding},` : "") + value.toLowerCase();
    else if (name === "upgrade") upgrade = true;
  }
  // Two different lengths or a bad one: the sender is known, the next request's start is not.
  if (upgrade || badLength || method === "CONNECT" || method === "PRI") return { from, next: "raw", contentLength: 0 };
  if (transferEncoding !== undefined) {
    const codings = transferEncoding.split(",").map((s) => s.trim());
    // A body not framed by chunked runs to the end of the connection.
    return { from, next: codings[codings.length - 1] === "chunked" ? "chunked" : "raw", contentLength: 0 };
  }
  if (contentLength !== undefined && contentLength > 0) return { from, next: "body", contentLength };
  return { from, next: "head", contentLength: 0 };
}
