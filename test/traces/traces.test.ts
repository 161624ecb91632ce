// fencecheck traces on hand-written OTLP JSON (docs/traces.md's conventions):
// a valid trace, a stale write and two holders at once are judged as a run with
// the same history would be, and `fencecheck check` of the run directory it
// writes agrees; what a trace lacks is counted and proves nothing; and what is
// not OTLP JSON, or breaks the conventions, is refused with 254 and writes nothing.
import { describe, it, expect } from "vitest";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { runCli, tempDir } from "../helpers.ts";
import { instanceLine, kv } from "./otlp.ts";

const T0 = 1_796_000_000_000_000_000n;
const ms = (t: number) => String(T0 + BigInt(Math.round(t * 1e6)));
let ids = 0;
const hex = (n: number, digits: number) => n.toString(16).padStart(digits, "0");

type Attr = string | number | boolean;
interface S {
  name: string;
  from: number;
  to: number;
  attrs: Record<string, Attr>;
  thread?: string;
  error?: boolean;
}

/** One line of the file exporter: the spans of one service instance. */
function line(instance: string, spans: S[]): string {
  return instanceLine(
    instance,
    spans.map((s) => ({
      traceId: hex(++ids, 32),
      spanId: hex(ids, 16),
      name: s.name,
      kind: 1,
      startTimeUnixNano: ms(s.from),
      endTimeUnixNano: ms(s.to),
      attributes: kv({ ...s.attrs, "thread.id": s.thread ?? "1" }),
      status: s.error ? { code: 2 } : {},
    })),
    { "service.name": "orders" },
  );
}

/** A hold of `owner` on k0: acquire, one write at `write`, release; its resource decision with `order`. */
function hold(owner: string, fence: number, at: number, opts: { write: number; order: number; accepted?: boolean; release?: boolean }): { client: S[]; resource: S } {
  const client: S[] = [
    { name: "lock.acquire", from: at, to: at + 2, attrs: { "lock.key": "k0", "lock.owner": owner, "lock.fence": fence, "lock.ttl_ms": 1000, "lock.outcome": "ok" } },
    { name: "lock.write", from: opts.write, to: opts.write + 3, attrs: { "lock.key": "k0", "lock.owner": owner, "lock.fence": fence, "lock.data": `${owner}#1` } },
  ];
  if (opts.release !== false) client.push({ name: "lock.release", from: opts.write + 4, to: opts.write + 5, attrs: { "lock.key": "k0", "lock.owner": owner, "lock.fence": fence, "lock.released": true } });
  const resource: S = {
    name: "lock.decision",
    from: opts.write + 1,
    to: opts.write + 2,
    attrs: { "lock.key": "k0", "lock.owner": owner, "lock.fence": fence, "lock.data": `${owner}#1`, "lock.decision.accepted": opts.accepted ?? true, "lock.decision.order": opts.order, "lock.fencing": false },
  };
  return { client, resource };
}

function write(dir: string, name: string, lines: string[]): string {
  const file = join(dir, name);
  writeFileSync(file, lines.join("\n") + "\n");
  return file;
}

async function traces(file: string) {
  const store = tempDir("fc-traces-");
  const cli = runCli("traces", ["--store", store, file]);
  const code = await cli.exit;
  const dir = cli.stdout().match(/^Run directory: (.*)$/m)?.[1];
  return { code, out: cli.stdout(), err: cli.stderr(), dir, store };
}

describe("fencecheck traces", () => {
  it("a valid trace, a stale write and two holders at once: the run's verdicts, and `fencecheck check` of the run directory agrees", async () => {
    const dir = tempDir("fc-traces-in-");
    const a = hold("a-1", 1, 0, { write: 100, order: 1 });
    const b = hold("b-1", 2, 300, { write: 400, order: 2 });
    const valid = write(dir, "valid.json", [line("api-1", a.client), line("api-2", b.client), line("store-1", [a.resource, b.resource])]);

    // a is frozen past its lease: b is granted at 1500 and writes; a's write lands after, unfenced.
    const a2 = hold("a-1", 1, 0, { write: 2000, order: 2 });
    const b2 = hold("b-1", 2, 1500, { write: 1600, order: 1 });
    const stale = write(dir, "stale.json", [line("api-1", a2.client), line("api-2", b2.client), line("store-1", [a2.resource, b2.resource])]);

    // b granted at 100 while a, granted at 0 with a lease of 1 s, releases only at 504: certainly valid at once.
    const a3 = hold("a-1", 1, 0, { write: 500, order: 2 });
    const b3 = hold("b-1", 2, 100, { write: 150, order: 1 });
    const twice = write(dir, "twice.json", [line("api-1", a3.client), line("api-2", b3.client), line("store-1", [a3.resource, b3.resource])]);

    const v = await traces(valid);
    expect([v.code, v.out], v.err).toEqual([0, expect.stringMatching(/^VALID {2}fenced-write on traces/m)]);
    expect(v.out).toContain("trace: 8 spans; 0 hold(s) with no release span");
    const s = await traces(stale);
    expect(s.code, s.out + s.err).toBe(1);
    expect(s.out).toMatch(/^ {2}stale-write-accepted ×1/m);
    const m = await traces(twice);
    expect(m.code, m.out + m.err).toBe(1);
    expect(m.out).toMatch(/^ {2}mutex-violation ×1/m);

    // The witness's events carry their spans' ids.
    const results = JSON.parse(readFileSync(join(s.dir!, "results.json"), "utf8"));
    const history = readFileSync(join(s.dir!, "history.ndjson"), "utf8").trim().split("\n").map((l) => JSON.parse(l));
    const witnessed = results.anomalies["stale-write-accepted"][0].events as number[];
    expect(witnessed.length).toBeGreaterThan(0);
    expect(history.filter((e) => witnessed.includes(e.index)).every((e) => /^[0-9a-f]{16}$/.test(e.value?.span_id ?? ""))).toBe(true);

    for (const run of [v, s, m]) {
      const check = runCli("check", [run.dir!, "--out", tempDir("fc-traces-check-")]);
      expect(await check.exit).toBe(run.code);
    }
  });

  it("sampled-out holds and dropped release spans are counted, and find no anomaly the whole trace lacks", async () => {
    const dir = tempDir("fc-traces-in-");
    const four = (release: (i: number) => boolean) => [0, 1, 2, 3].map((i) => hold(`c${i}-1`, i + 1, i * 300, { write: i * 300 + 100, order: i + 1, release: release(i) }));
    const whole = four(() => true);
    const w = await traces(write(dir, "whole.json", [line("api-1", whole.flatMap((h) => h.client)), line("store-1", whole.map((h) => h.resource))]));
    expect([w.code, w.out], w.err).toEqual([0, expect.stringMatching(/^VALID/m)]);
    // Holds 1 and 3 lost their release spans, and hold 2 was sampled out whole (client and resource spans).
    const holds = four((i) => i % 2 === 0);
    const kept = holds.filter((_, i) => i !== 2);
    const file = write(dir, "gaps.json", [line("api-1", kept.flatMap((h) => h.client)), line("store-1", kept.map((h) => h.resource))]);
    const r = await traces(file);
    expect([r.code, r.out], r.err).toEqual([0, expect.stringMatching(/^VALID/m)]);
    expect(r.out).toContain("2 hold(s) with no release span");
    const run = JSON.parse(readFileSync(join(r.dir!, "run.json"), "utf8"));
    expect(run.traces.gaps).toMatchObject({ holds_without_release: 2, writes_without_decision: 0 });

    // No decision spans at all: the order of writes comes from the history, as for a run without resource.ndjson.
    const noDecision = write(dir, "no-decision.json", [line("api-1", holds[0].client), line("store-1", [])]);
    const u = await traces(noDecision);
    expect(u.code, u.out + u.err).toBe(0);
    // A write whose decision was dropped from a trace that has decisions: unmatched, so the verdict cannot be VALID, and it is counted.
    const withDecisions = write(dir, "one-dropped.json", [line("api-1", [...holds[0].client, ...holds[1].client]), line("store-1", [holds[0].resource])]);
    const d = await traces(withDecisions);
    expect(d.out).toContain("1 ok write(s) with no decision");
    expect(d.code, d.out + d.err).toBe(2);
  });

  it("what is not OTLP JSON, or breaks the conventions, is refused with 254 naming it, and nothing is stored", async () => {
    const dir = tempDir("fc-traces-in-");
    const a = hold("a-1", 1, 0, { write: 100, order: 1 });
    const overlapping = [{ ...a.client[0], to: 150 }, a.client[1]];
    const cases: Array<[string, string | Buffer, RegExp]> = [
      ["zstd.json", Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 1, 2, 3]), /zstd-compressed/],
      ["proto.bin", Buffer.from([0x0a, 0x80, 0x01, 0x12, 0x00, 0xff, 0xfe]), /protobuf/],
      ["broken.json", `${line("api-1", a.client)}\n{"resourceSpans": [\n`, /broken\.json:2: not JSON/],
      ["base64.json", line("api-1", a.client).replace(/"spanId":"[0-9a-f]{16}"/, '"spanId":"AAAAAAAAAAE="'), /spanId: "AAAAAAAAAAE=" is not 16 hex digits/],
      ["overlap.json", line("api-1", overlapping), /starts [0-9.]+ ms before span [0-9a-f]{16} \(lock\.acquire\) of the same thread ends.*--clock-error/],
      ["no-key.json", line("api-1", [{ ...a.client[0], attrs: { "lock.owner": "a-1", "lock.outcome": "ok" } }]), /has no lock\.key/],
      ["outcome.json", line("api-1", [{ ...a.client[0], attrs: { ...a.client[0].attrs, "lock.outcome": "maybe" } }]), /lock\.outcome "maybe" is not ok, fail or unknown/],
      ["none.json", line("api-1", [{ name: "GET /orders", from: 0, to: 1, attrs: {} }]), /no lock spans/],
    ];
    for (const [name, content, message] of cases) {
      const file = join(dir, name);
      writeFileSync(file, content);
      const r = await traces(file);
      expect([r.code, r.err], name).toEqual([254, expect.stringMatching(message)]);
      expect(existsSync(r.store) ? readdirSync(r.store) : [], name).toEqual([]);
    }
  });
});
