// The reference checker (checker/reference/): hand-written histories for every
// anomaly type and each rule docs/anomalies.md amended on 2026-11-29
// (test/checker/reference-cases.ts), the reader's refusals and its killed-run
// leniency, the witnesses it keeps, `fencecheck check --reference`, and every
// stored run under histories/fixtures/ against the verdict the fast checker gave it.
import { describe, it, expect } from "vitest";
import { existsSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { referenceCheck, ORDER } from "../../checker/reference/index.ts";
import { BadInput } from "../../lib/index.ts";
import { REPO, runCli, tempRunDir } from "../helpers.ts";
import { cases, historyLines, writeCase, type Case } from "./reference-cases.ts";
import { fast } from "./fuzz/checkers.ts";

const check = async (c: Case) => (await referenceCheck(writeCase(c, tempRunDir("fencecheck-ref-")), { liveness: c.liveness })).results;

// The same histories through the fast checker (what `fencecheck check` runs): the rules are the
// docs', and both checkers must read them alike. Types compared as sets (each lists them in its order).
describe("fast checker: the same hand-written histories", () => {
  for (const c of cases())
    it(`${c.name}`, async () => {
      const r = await fast(writeCase(c, tempRunDir("fencecheck-fast-")), { liveness: c.liveness ?? "lenient" });
      expect(r.valid).toBe(c.valid);
      expect(new Set(r.anomaly_types)).toEqual(new Set(c.types));
      expect(r.anomaly_counts).toEqual(c.counts ?? {});
      if (c.unknown) expect(new Set(r.unknown_reasons)).toEqual(new Set(c.unknown));
    });
});

describe("reference checker: hand-written histories", () => {
  for (const c of cases())
    it(`${c.name}: ${c.valid === true ? "VALID" : c.valid === false ? `INVALID (${c.types.join(", ")})` : "UNKNOWN"}`, async () => {
      const r = await check(c);
      expect(r.valid).toBe(c.valid);
      expect(r.anomaly_types).toEqual(c.types);
      expect(r.stats.anomaly_counts).toEqual(c.counts ?? {});
      if (c.unknown) expect(r.stats.unknown_reasons).toEqual(c.unknown);
      for (const t of r.anomaly_types)
        for (const w of r.anomalies[t]) {
          expect(typeof w.explanation).toBe("string");
          expect(w.events?.every((e) => Number.isInteger(e))).not.toBe(false);
        }
    });

  const named = (name: string) => cases().find((c) => c.name === name)!;

  it("amended: an ok write whose decision says accepted: null stays INVALID when the history alone proves a stale write", async () => {
    const r = await check(named("amended-unknown-decision-stays-invalid"));
    expect(r.valid).toBe(false);
    expect(r.anomaly_types).toEqual(["stale-write-accepted"]);
    // The witness rests on the history (no seqs): the log shows no stale write.
    expect(r.anomalies["stale-write-accepted"][0].seqs).toBeUndefined();
    expect(r.stats.unknown_reasons).toEqual(["1 writes completed ok in the history but resource.ndjson has no accepted decision for them"]);
  });

  it("amended: a renew whose ok comes after the lease lapsed starts a new span; a hold in the gap is no mutex-violation", async () => {
    expect((await check(named("amended-late-renew-starts-a-new-span"))).valid).toBe(true);
    const met = await check(named("amended-late-renew-span-meets-another-hold"));
    expect(met.anomaly_types).toEqual(["mutex-violation", "lost-lock-unnoticed"]);
    expect(met.anomalies["mutex-violation"][0].explanation).toContain("from 130.000 ms to 180.000 ms");
  });

  it("amended: a re-entry granted to another process is a reentrancy-violation", async () => {
    const r = await check(named("amended-reentry-by-another-process"));
    expect(r.anomaly_types).toEqual(["reentrancy-violation"]);
    expect(r.anomalies["reentrancy-violation"][0].explanation).toContain("not process 1's");
  });

  it("lists anomaly types in ORDER and keeps at most 100 witnesses, counting them all", async () => {
    // 105 holds one after another, all given fence 1: 104 duplicates of the first.
    const ops: Case["ops"] = [];
    for (let i = 0; i < 105; i++) {
      ops.push({ p: i, f: "acquire", at: i * 10, done: i * 10 + 1, iv: { ttl_ms: 5 }, ov: { owner: `h${i}`, fence: 1, ttl_ms: 5 } });
      ops.push({ p: i, f: "release", at: i * 10 + 2, done: i * 10 + 3, iv: { owner: `h${i}` }, ov: { released: true } });
    }
    const r = await check({ name: "many-duplicates", ops, valid: false, types: [] });
    expect(r.stats.anomaly_counts).toEqual({ "duplicate-fence": 104 });
    expect(r.anomalies["duplicate-fence"]).toHaveLength(100);
    const firsts = r.anomalies["duplicate-fence"].map((w) => Math.min(...w.events!));
    expect(firsts).toEqual([...firsts].sort((a, b) => a - b));
    expect(ORDER.indexOf("duplicate-fence")).toBeLessThan(ORDER.indexOf("lost-update"));
  });
});

describe("reference checker: reading a run", () => {
  const base = cases().find((c) => c.name === "stale-write-from-log")!;
  const withLines = (mutate: (lines: string[]) => string[], raw?: (text: string) => string): string => {
    const dir = writeCase(base, tempRunDir("fencecheck-ref-"));
    const text = mutate(historyLines(base)).join("\n") + "\n";
    writeFileSync(join(dir, "history.ndjson"), raw ? raw(text) : text);
    return dir;
  };
  const refuses = async (dir: string, message: RegExp) => {
    const err = await referenceCheck(dir).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(BadInput);
    expect((err as Error).message).toMatch(message);
  };

  it("refuses a missing run directory, or one without history.ndjson", async () => {
    await refuses(join(tempRunDir(), "nosuch"), /does not exist/);
    await refuses(tempRunDir(), /has no history\.ndjson/);
  });

  it("refuses a line that is not JSON, or not an event, naming the file and the line", async () => {
    await refuses(withLines((l) => [...l.slice(0, 2), "{not json", ...l.slice(2)]), /history\.ndjson line 3: not valid JSON/);
    await refuses(withLines((l) => [...l.slice(0, 2), "", ...l.slice(2)]), /history\.ndjson line 3: empty line/);
    const noOwner = (l: string[]) => l.map((s) => (s.includes('"f":"write","key":"k0","value":{"owner":"b"') && s.includes("invoke") ? s.replace('"owner":"b",', "") : s));
    await refuses(withLines(noOwner), /history\.ndjson line \d+: "value\.owner" must be a string/);
    await refuses(withLines((l) => [l[0].replace('"format":1', '"format":3'), ...l.slice(1)]), /line 1: "format" 3 is not supported/);
    await refuses(withLines((l) => [l[0], l[1], l[1].replace('"time":0', '"time":1'), ...l.slice(2)]), /"index" 0 was already used on line 2/);
  });

  it("refuses a broken invoke/completion rule", async () => {
    const c: Case = {
      name: "after-info",
      ops: [
        { p: 0, f: "acquire", at: 0, done: 1, outcome: "info", iv: { ttl_ms: 10 } },
        { p: 0, f: "acquire", at: 2, done: 3, iv: { ttl_ms: 10 }, ov: { owner: "a", fence: 1 } },
      ],
      valid: true,
      types: [],
    };
    await refuses(writeCase(c, tempRunDir()), /process 0 invokes "acquire" after its operation got info on line 3/);
  });

  it("refuses a format 1 resource line with order or accepted: null, naming its seq", async () => {
    const dir = writeCase(base, tempRunDir());
    const lines = readFileSync(join(dir, "resource.ndjson"), "utf8").trim().split("\n");
    writeFileSync(join(dir, "resource.ndjson"), [lines[0], lines[1].replace("}", ',"order":2}')].join("\n") + "\n");
    await refuses(dir, /resource\.ndjson line 2: seq 2 carries "order"/);
  });

  it("skips a last line cut short, with a warning, and reads a whole last line without its newline", async () => {
    const whole = await referenceCheck(withLines((l) => l));
    const cut = await referenceCheck(withLines((l) => [...l, '{"index":99,"time":9'], (t) => t.replace(/\n$/, "")));
    expect(cut.results).toEqual(whole.results);
    expect(cut.warnings.join("\n")).toMatch(/history\.ndjson line \d+: last line cut short \(no newline, not valid JSON\); skipped/);
    const noNewline = await referenceCheck(withLines((l) => l, (t) => t.replace(/\n$/, "")));
    expect(noNewline.results).toEqual(whole.results);
    expect(noNewline.warnings).toEqual([]);
    // A last line that ends in its newline is whole: not JSON, it is bad input.
    await refuses(withLines((l) => [...l, '{"index":99,"time":9']), /not valid JSON/);
  });

  it("orders lines out of time order by (time, index)", async () => {
    const whole = await referenceCheck(withLines((l) => l));
    const shuffled = await referenceCheck(withLines((l) => [l[0], ...l.slice(1).reverse()]));
    expect(shuffled.results).toEqual(whole.results);
  });
});

describe("reference checker: fencecheck check --reference", () => {
  it("prints the verdict, writes results.json into --out and exits by the verdict", async () => {
    const run = writeCase(cases().find((c) => c.name === "stale-write-from-log")!, tempRunDir());
    const out = join(tempRunDir(), "out");
    const cli = runCli("check", ["--reference", run, "--out", out]);
    expect(await cli.exit).toBe(1);
    expect(cli.stdout()).toMatch(/^INVALID .*\[reference checker\]\n {2}stale-write-accepted ×1: /);
    const results = JSON.parse(readFileSync(join(out, "results.json"), "utf8"));
    expect(results.anomaly_types).toEqual(["stale-write-accepted"]);
    expect(existsSync(join(run, "results.json"))).toBe(false);
    const strict = runCli("check", ["--reference", "--model", "strict", run]);
    expect(await strict.exit).toBe(254);
    expect(strict.stderr()).toContain("--reference has no model check");
  });
});

// The stored runs. Where the fast checker's results.json is stored, the reference
// must give the same verdict, types and counts. The others (their results.json is
// not kept in the repository) are held to what docs/anomalies.md says of them
// ("Also: ... fixtures ...") and their place under good/ or bad/, confirmed by
// running `fencecheck check --out` on each on 2026-11-29. No fixture needs one of
// the rules amended on 2026-11-29 to get its verdict: on all fifteen the
// reference and the fast checker agree, counts included.
const EXPECTED: Record<string, { valid: boolean; types: string[]; counts: Record<string, number> }> = {
  "bad/recorded-redis-l1-blind-renew-lost-lock-unnoticed": { valid: false, types: ["mutex-violation", "lost-lock-unnoticed"], counts: { "mutex-violation": 1, "lost-lock-unnoticed": 1 } },
  "bad/recorded-redlock-k5-expired-on-arrival": { valid: false, types: ["lost-update", "expired-on-arrival"], counts: { "lost-update": 1, "expired-on-arrival": 1 } },
  "bad/synthetic-redis-counter-pause-fence-on": { valid: false, types: ["lost-update"], counts: { "lost-update": 1 } },
  "bad/synthetic-redis-fenced-write-pause-fence-off": { valid: false, types: ["stale-write-accepted"], counts: { "stale-write-accepted": 1 } },
  "bad/synthetic-redis-fenced-write-restart-fence-on": { valid: false, types: ["duplicate-fence", "fence-regression"], counts: { "duplicate-fence": 15, "fence-regression": 14 } },
  "bad/synthetic-redlock-fenced-write-clock-jump-fence-on": { valid: false, types: ["mutex-violation"], counts: { "mutex-violation": 7 } },
  "good/recorded-redis-l1-checked-renew": { valid: true, types: [], counts: {} },
  "good/recorded-redlock-k5-validity-checked": { valid: true, types: [], counts: {} },
  "good/synthetic-etcd-fenced-write-partition-fence-on": { valid: true, types: [], counts: {} },
  "good/synthetic-redis-fenced-write-pause-fence-on": { valid: true, types: [], counts: {} },
  // The amended rules' fixtures (2026-11-29), each checked wrongly by the fast checker before them.
  "good/synthetic-redis-renew-answered-after-its-lease": { valid: true, types: [], counts: {} },
  "bad/synthetic-reentry-by-another-process": { valid: false, types: ["reentrancy-violation"], counts: { "reentrancy-violation": 1 } },
  "bad/synthetic-reentry-without-outer-hold": { valid: false, types: ["reentrancy-violation"], counts: { "reentrancy-violation": 1 } },
  "bad/synthetic-unknown-decision-hides-stale-write": { valid: false, types: ["stale-write-accepted"], counts: { "stale-write-accepted": 1 } },
};

describe("reference checker: every stored run under histories/fixtures/", () => {
  const root = join(REPO, "histories", "fixtures");
  const runs = ["good", "bad"].flatMap((g) => readdirSync(join(root, g)).map((n) => `${g}/${n}`));
  it("finds the fixtures", () => expect(runs.length).toBeGreaterThanOrEqual(15));
  for (const name of runs)
    it(name, async () => {
      const dir = join(root, name);
      const { results } = await referenceCheck(dir);
      expect(results.valid).toBe(name.startsWith("good/"));
      const stored = join(dir, "results.json");
      const want = existsSync(stored) ? JSON.parse(readFileSync(stored, "utf8")) : null;
      const expected = want ? { valid: want.valid, types: want.anomaly_types, counts: want.stats.anomaly_counts } : EXPECTED[name];
      expect(expected, `no results.json and no expectation for ${name}`).toBeDefined();
      expect(results.valid).toBe(expected.valid);
      expect(results.anomaly_types).toEqual(expected.types);
      expect(results.stats.anomaly_counts).toEqual(expected.counts);
    });
});
