// The byte-level reader of a line's first fields (reports/scan.ts) must agree with
// JSON.parse on every layout a valid line may have, not only the writers' usual one.
import { describe, expect, it } from "vitest";
import { emptyHead, FAIL_TYPE, INFO_TYPE, INVOKE_TYPE, OK_TYPE, readDecisionHead, readEventHead, readEventStart } from "../../reports/scan.ts";

const TYPES: Record<string, number> = { invoke: INVOKE_TYPE, ok: OK_TYPE, fail: FAIL_TYPE, info: INFO_TYPE };

function head(line: string, read = readEventHead) {
  const b = Buffer.from(`xx${line}\n`);
  const h = emptyHead();
  read(b, 2, b.length - 1, h);
  return h;
}

function expected(line: string) {
  const o = JSON.parse(line) as Record<string, unknown>;
  const nemesis = o.process === "nemesis";
  return { index: o.index, time: o.time, process: nemesis ? NaN : o.process, nemesis, type: TYPES[o.type as string], f: o.f };
}

const LINES = [
  `{"index":0,"time":4899176263,"process":1,"type":"invoke","f":"acquire","key":"k0","value":{"ttl_ms":1000}}`,
  `{"index":12,"time":1642761,"process":11,"type":"ok","f":"acquire","key":"k4","value":{"owner":"c11-h1","fence":3,"ttl_ms":1000}}`,
  `{"index":65,"time":6385738183,"process":"nemesis","type":"info","f":"start-pause","value":{"targets":["worker-2"],"duration_ms":3256}}`,
  `{"index":7,"time":70,"process":3,"type":"fail","f":"write","key":"k","value":{"owner":"o","fence":1,"seen":2},"error":"stale-fence"}`,
  `{"index":8,"time":80,"process":3,"type":"fail","f":"write","key":"k","value":{"owner":"o","fence":1,"error":"nested"},"error":"timeout"}`,
  `{"index":9,"time":90,"process":4,"type":"info","f":"release","key":"k","error":"timeout"}`,
  // Other layouts, escapes and spacing: the slow path.
  `{"time":100,"f":"renew","type":"ok","process":5,"index":10,"value":{"ttl_ms":5}}`,
  `{ "index" : 11 , "time" : 110 , "process" : 6 , "type" : "invoke" , "f" : "write" , "key" : "a\\"b" }`,
  `{"index":12,"time":120,"process":7,"type":"invoke","f":"wr\\u0069te","key":"k"}`,
  `{"key":"{\\"index\\":99,\\"time\\":1}","value":[{"index":98}],"index":13,"time":130,"process":8,"type":"ok","f":"read"}`,
  `{"index":14,"time":140,"process":9,"type":"invoke","f":"read"}`,
  // The runner's start, then a value the full reader leaves to JSON.parse.
  `{"index":15,"time":150,"process":2,"type":"ok","f":"acquire","key":"k","value":{"owner":"o","fence":1,"ttl_ms":0.5}}`,
  `{"index":16,"time":160,"process":2,"type":"invoke","f":"lease-extend","key":"k"}`,
];

describe("readEventHead", () => {
  it.each(LINES)("agrees with JSON.parse on %s", (line) => {
    const h = head(line);
    const want = expected(line);
    expect({ index: h.index, time: h.time, process: h.process, nemesis: h.nemesis, type: h.type, f: h.f }).toEqual(want);
  });

  it.each(LINES)("reads the start (readEventStart) as JSON.parse does on %s", (line) => {
    const h = head(line, readEventStart);
    const want = expected(line);
    expect({ index: h.index, time: h.time, process: h.process, nemesis: h.nemesis, type: h.type, f: h.f }).toEqual(want);
    expect(h.error).toBeUndefined();
  });

  it("reads the error of a failed write, which tells a stale fence from other failures", () => {
    expect(head(LINES[3]).error).toBe("stale-fence");
    expect(head(LINES[4]).error).toBe("timeout");
  });
});

describe("readDecisionHead", () => {
  it("reads seq and time in any layout", () => {
    const out: [number, number] = [0, 0];
    for (const line of [
      `{"seq":1,"time":3295448,"op":"write","key":"k7","process":13,"owner":"c13-h1","fence":1,"max_before":null,"accepted":true,"data":"x","fencing":true}`,
      `{"data":{"seq":5,"time":6},"time":77,"key":"k","seq":9}`,
    ]) {
      const b = Buffer.from(line);
      readDecisionHead(b, 0, b.length, out);
      const o = JSON.parse(line) as { seq: number; time: number };
      expect(out).toEqual([o.seq, o.time]);
    }
  });
});
