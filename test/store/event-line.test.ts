// The byte readers of store/event-line.ts stand in for JSON.parse on the lines they
// accept, so for every line they accept they must give exactly what JSON.parse
// (and the reader's checks after it) gives: the same fields, the same verdict on
// the line, the same message when it is wrong. Lines of every shape are generated,
// the plain layout the runner writes and many others.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { emptyFields, readFields, type EventFields } from "../../store/event-fields.ts";
import { DecisionLineReader, EventLineReader } from "../../store/event-line.ts";
import { decisionProblem } from "../../store/reader.ts";

const str = fc.oneof(
  fc.constantFrom("acquire", "renew", "release", "write", "read", "invoke", "ok", "fail", "info", "k1", "c1-h2", "timeout", "stale-fence", "nemesis", ""),
  // Near misses of the words the reader matches by their bytes.
  fc.constantFrom("o", "okay", "inf", "infos", "invok", "invokes", "inv", "fai", "fails", "acquir", "acquires", "acquirE", "renews", "rene", "relea", "releasE", "writ", "writes", "rea", "reads", "rEad"),
  fc.string({ maxLength: 6 }),
  fc.string({ unit: "grapheme", maxLength: 4 }),
);
const int = fc.oneof(fc.integer({ min: -5, max: 5 }), fc.integer(), fc.maxSafeInteger(), fc.constant(-0), fc.constant(2 ** 53), fc.constant(1e21));
const scalar = fc.oneof(int, str, fc.boolean(), fc.constant(null), fc.double({ noNaN: true }));
const anyValue = fc.oneof({ weight: 6, arbitrary: scalar }, { weight: 1, arbitrary: fc.array(scalar, { maxLength: 2 }) }, { weight: 1, arbitrary: fc.dictionary(str, scalar, { maxKeys: 2 }) });
/** Mostly what the runner writes, sometimes anything. */
const plain = fc.oneof({ weight: 4, arbitrary: fc.oneof(fc.nat(), fc.constantFrom("c1-h1#2", "x", "timeout"), fc.boolean(), fc.constant(null)) }, { weight: 1, arbitrary: anyValue });

const typical = fc.record({
  index: fc.oneof({ weight: 5, arbitrary: fc.nat() }, { weight: 1, arbitrary: anyValue }),
  time: fc.oneof({ weight: 5, arbitrary: fc.nat() }, { weight: 1, arbitrary: anyValue }),
  process: fc.oneof({ weight: 5, arbitrary: fc.integer({ min: -2, max: 60 }) }, { weight: 1, arbitrary: fc.constant("nemesis") }, { weight: 1, arbitrary: anyValue }),
  type: fc.oneof({ weight: 5, arbitrary: fc.constantFrom("invoke", "ok", "fail", "info") }, { weight: 1, arbitrary: anyValue }),
  f: fc.oneof({ weight: 5, arbitrary: fc.constantFrom("acquire", "renew", "release", "write", "read") }, { weight: 1, arbitrary: anyValue }),
  key: fc.oneof({ weight: 5, arbitrary: fc.constantFrom("k1", "k2", "lock") }, { weight: 1, arbitrary: anyValue }),
  error: fc.oneof(fc.constantFrom("timeout", "stale-fence"), plain),
  value: fc.oneof(
    { weight: 6, arbitrary: fc.record({
      owner: fc.oneof({ weight: 4, arbitrary: fc.constantFrom("c1-h1", "c2-h9") }, { weight: 1, arbitrary: anyValue }),
      fence: fc.oneof({ weight: 4, arbitrary: fc.nat() }, { weight: 1, arbitrary: anyValue }),
      ttl_ms: fc.oneof({ weight: 4, arbitrary: fc.nat({ max: 5000 }) }, { weight: 1, arbitrary: anyValue }),
      queued_ms: fc.oneof(fc.nat({ max: 5000 }), plain),
      released: fc.oneof(fc.boolean(), plain),
      data: plain,
      seen: plain,
      validity_ms: fc.oneof(fc.integer({ min: -5000, max: 5000 }), plain),
      mode: fc.oneof(fc.constantFrom("read", "write"), plain),
      depth: fc.oneof(fc.integer({ min: 0, max: 4 }), plain),
      behind: fc.oneof(fc.constantFrom("c1-h1", "c2-h9"), plain),
    }, { requiredKeys: [] }) },
    { weight: 1, arbitrary: anyValue },
  ),
}, { requiredKeys: [] });

/** Mostly events in the runner's layout and of its fields, with a stray field or value now and then. */
const runnerLike = fc.record({
  index: fc.oneof({ weight: 10, arbitrary: fc.nat() }, { weight: 1, arbitrary: anyValue }),
  time: fc.oneof({ weight: 10, arbitrary: fc.nat() }, { weight: 1, arbitrary: anyValue }),
  process: fc.oneof({ weight: 10, arbitrary: fc.integer({ min: -2, max: 60 }) }, { weight: 1, arbitrary: fc.constant("nemesis") }),
  type: fc.oneof({ weight: 10, arbitrary: fc.constantFrom("invoke", "ok", "fail", "info") }, { weight: 1, arbitrary: anyValue }),
  f: fc.oneof({ weight: 10, arbitrary: fc.constantFrom("acquire", "renew", "release", "write", "read") }, { weight: 1, arbitrary: str }),
  key: fc.oneof({ weight: 10, arbitrary: fc.constantFrom("k1", "k2", "lock") }, { weight: 1, arbitrary: anyValue }),
  error: fc.oneof({ weight: 3, arbitrary: fc.constantFrom("timeout", "stale-fence") }, { weight: 1, arbitrary: plain }),
  value: fc.record({
    owner: fc.oneof({ weight: 6, arbitrary: fc.constantFrom("c1-h1", "c2-h9") }, { weight: 1, arbitrary: plain }),
    fence: fc.oneof({ weight: 6, arbitrary: fc.oneof(fc.nat(), fc.constant(null)) }, { weight: 1, arbitrary: plain }),
    ttl_ms: fc.oneof({ weight: 6, arbitrary: fc.nat({ max: 5000 }) }, { weight: 1, arbitrary: plain }),
    queued_ms: fc.oneof(fc.nat({ max: 5000 }), plain),
    validity_ms: fc.oneof(fc.integer({ min: -5000, max: 5000 }), plain),
    released: fc.oneof(fc.boolean(), plain),
    data: plain,
    seen: plain,
    mode: fc.oneof({ weight: 3, arbitrary: fc.constantFrom("read", "write") }, { weight: 1, arbitrary: plain }),
    depth: fc.oneof({ weight: 3, arbitrary: fc.integer({ min: 1, max: 4 }) }, { weight: 1, arbitrary: plain }),
    behind: fc.oneof({ weight: 3, arbitrary: fc.constantFrom("c1-h1", "c2-h9") }, { weight: 1, arbitrary: plain }),
  }, { requiredKeys: [] }),
}, { requiredKeys: ["index", "time", "process", "type", "f", "key"] });

/** A line of the object in some layout: JSON.stringify's, its keys shuffled, or bent a little. */
const lineOf = (o: fc.Arbitrary<Record<string, unknown>>) => fc.tuple(o, fc.nat(), fc.integer({ min: 0, max: 15 })).map(([obj, seed, bend]) => {
  const keys = Object.keys(obj);
  if (seed % 3 === 0) keys.sort((a, b) => ((a.length * 7 + seed) % 5) - ((b.length * 7 + seed) % 5));
  let line = `{${keys.map((k) => `${JSON.stringify(k)}:${JSON.stringify(obj[k])}`).join(",")}}`;
  if (bend === 1) line = line.replace(":", ": ");
  else if (bend === 2) line = line.slice(0, Math.max(0, line.length - 1 - (seed % 4)));
  else if (bend === 3) line += " ";
  else if (bend === 4 && keys.length > 0) line = line.replace("{", `{${JSON.stringify(keys[0])}:1,`);
  else if (bend === 5) line = line.replace(/\d/, "x");
  return line;
});

function parsed(line: string): unknown {
  try {
    return JSON.parse(line);
  } catch {
    return Symbol("invalid");
  }
}

const same = (a: EventFields, b: EventFields): boolean =>
  (Object.keys(a) as (keyof EventFields)[]).every((k) => Object.is(a[k], b[k]));

describe("EventLineReader", () => {
  it("accepts only lines JSON.parse reads the same, and readFields then says and gives the same", () => {
    const reader = new EventLineReader();
    let accepted = 0, runs = 0;
    fc.assert(fc.property(lineOf(typical), (line) => {
      runs++;
      const b = Buffer.from(`junk\n${line}\n`);
      const rec = reader.read(b, 5, b.length - 1);
      if (rec === null) return;
      accepted++;
      const o = parsed(line);
      expect(typeof o).toBe("object");
      const a = emptyFields(), c = emptyFields();
      const pa = readFields(rec, a), pc = readFields(o, c);
      expect(pa).toBe(pc);
      if (pa === null) expect(same(a, c)).toBe(true);
    }), { numRuns: 3000 });
    // The property would say nothing if the reader refused everything.
    expect(accepted).toBeGreaterThan(runs / 10);
  });

  it("reads the lines the runner writes", () => {
    const reader = new EventLineReader();
    for (const line of [
      `{"index":0,"time":210444,"process":13,"type":"invoke","f":"acquire","key":"k7","value":{"ttl_ms":1000}}`,
      `{"index":9,"time":2104,"process":3,"type":"ok","f":"acquire","key":"k7","value":{"owner":"c3-h1","fence":4,"ttl_ms":1000,"queued_ms":0}}`,
      `{"index":11,"time":2105,"process":3,"type":"fail","f":"write","key":"k7","error":"stale-fence","value":{"owner":"c3-h1","fence":4,"seen":5}}`,
      `{"index":12,"time":2106,"process":3,"type":"ok","f":"release","key":"k7","value":{"released":false}}`,
    ]) {
      const b = Buffer.from(line);
      const rec = reader.read(b, 0, b.length);
      expect(rec).not.toBeNull();
      const a = emptyFields(), c = emptyFields();
      expect(readFields(rec, a)).toBeNull();
      expect(readFields(JSON.parse(line), c)).toBeNull();
      expect(same(a, c)).toBe(true);
    }
  });
});

describe("EventLineReader.readEvent", () => {
  it("takes only lines readFields accepts after JSON.parse, and gives the same fields", () => {
    const reader = new EventLineReader();
    let accepted = 0, runs = 0;
    fc.assert(fc.property(lineOf(fc.oneof({ weight: 1, arbitrary: typical }, { weight: 3, arbitrary: runnerLike })), (line) => {
      runs++;
      const b = Buffer.from(`junk\n${line}\n`);
      const a = emptyFields();
      if (!reader.readEvent(b, 5, b.length - 1, a)) return;
      accepted++;
      const c = emptyFields();
      expect(readFields(parsed(line), c)).toBeNull();
      expect(same(a, c)).toBe(true);
    }), { numRuns: 5000 });
    // About one line in ten is a valid event in the runner's layout; the property says nothing if none is.
    expect(accepted).toBeGreaterThan(runs / 20);
  });

  it("reads the lines the runner writes, and leaves a write's data out when asked", () => {
    const lines = [
      `{"index":0,"time":210444,"process":13,"type":"invoke","f":"acquire","key":"k7","value":{"ttl_ms":1000}}`,
      `{"index":9,"time":2104,"process":3,"type":"ok","f":"acquire","key":"k7","value":{"owner":"c3-h1","fence":4,"ttl_ms":1000,"queued_ms":0,"validity_ms":-3}}`,
      `{"index":10,"time":2105,"process":3,"type":"invoke","f":"write","key":"k7","value":{"owner":"c3-h1","fence":4,"data":"c3-h1#4"}}`,
      `{"index":11,"time":2105,"process":3,"type":"fail","f":"write","key":"k7","error":"stale-fence","value":{"owner":"c3-h1","fence":4,"seen":5}}`,
      `{"index":12,"time":2106,"process":3,"type":"ok","f":"release","key":"k7","value":{"released":false}}`,
    ];
    for (const keep of [true, false]) {
      const reader = new EventLineReader(keep);
      for (const line of lines) {
        const b = Buffer.from(line);
        const a = emptyFields(), c = emptyFields();
        expect(reader.readEvent(b, 0, b.length, a)).toBe(true);
        expect(readFields(JSON.parse(line), c)).toBeNull();
        if (!keep && c.data !== undefined) c.data = null;
        expect(same(a, c)).toBe(true);
      }
    }
  });
});

const decision = fc.record({
  seq: fc.oneof({ weight: 20, arbitrary: fc.integer({ min: 1, max: 1e6 }) }, { weight: 1, arbitrary: anyValue }),
  time: fc.oneof({ weight: 20, arbitrary: fc.nat() }, { weight: 1, arbitrary: anyValue }),
  op: fc.oneof({ weight: 20, arbitrary: fc.constantFrom("write", "read") }, { weight: 1, arbitrary: anyValue }),
  key: fc.oneof({ weight: 20, arbitrary: fc.constantFrom("k1", "k2") }, { weight: 1, arbitrary: anyValue }),
  process: fc.oneof({ weight: 20, arbitrary: fc.integer({ min: -3, max: 60 }) }, { weight: 1, arbitrary: anyValue }),
  owner: fc.oneof({ weight: 20, arbitrary: fc.constantFrom("c1-h1", "c2-h3") }, { weight: 1, arbitrary: anyValue }),
  fence: fc.oneof({ weight: 20, arbitrary: fc.oneof(fc.nat(), fc.constant(null)) }, { weight: 1, arbitrary: anyValue }),
  max_before: fc.oneof({ weight: 20, arbitrary: fc.oneof(fc.nat(), fc.constant(null)) }, { weight: 1, arbitrary: anyValue }),
  accepted: fc.oneof({ weight: 20, arbitrary: fc.boolean() }, { weight: 2, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: anyValue }),
  data: plain,
  fencing: fc.oneof({ weight: 20, arbitrary: fc.boolean() }, { weight: 1, arbitrary: anyValue }),
  // Format 2's committed decisions: a database's resource adds the decision's place last.
  order: fc.oneof({ weight: 20, arbitrary: fc.integer({ min: 1, max: 1e6 }) }, { weight: 2, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: anyValue }),
}, { requiredKeys: ["seq", "time", "op", "key", "process", "owner", "fence", "max_before", "accepted", "fencing"] });

describe("DecisionLineReader", () => {
  it("accepts only valid lines, and gives what JSON.parse gives, fields in the same order", () => {
    const reader = new DecisionLineReader();
    let accepted = 0, runs = 0;
    fc.assert(fc.property(lineOf(decision), (line) => {
      runs++;
      const b = Buffer.from(`${line}\n`);
      const d = reader.read(b, 0, b.length - 1);
      if (d === null) return;
      accepted++;
      const o = parsed(line);
      expect(decisionProblem(o)).toBeNull();
      expect(Object.keys(d)).toEqual(Object.keys(o as object));
      for (const k of Object.keys(d)) expect(Object.is((d as unknown as Record<string, unknown>)[k], (o as Record<string, unknown>)[k])).toBe(true);
    }), { numRuns: 3000 });
    expect(accepted).toBeGreaterThan(runs / 10);
  });
});
