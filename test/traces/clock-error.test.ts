// --clock-error: hosts whose clocks may be off. Two holds on two hosts overlap
// by 80 ms as written, and a later acquire on another host got a lower fence 20
// ms after a grant: with small bounds both are certain, with larger ones they
// are only possible (listed apart, VALID), and both checkers say the same. The
// bounds reach the run directory (run.json clock_error), so `fencecheck check`
// judges it again the same way; bad bounds are 254 and write nothing.
import { describe, it, expect } from "vitest";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { runCli, takenPort, tempDir, waitFor } from "../helpers.ts";
import { instanceLine, kv } from "./otlp.ts";

const T0 = 1_796_000_000_000_000_000n;
const at = (t: number) => String(T0 + BigInt(Math.round(t * 1e6)));
let ids = 0;
const hex = (n: number, digits: number) => n.toString(16).padStart(digits, "0");

function span(name: string, from: number, to: number, attrs: Record<string, unknown>) {
  ids++;
  return { traceId: hex(ids, 32), spanId: hex(ids, 16), name, kind: 1, startTimeUnixNano: at(from), endTimeUnixNano: at(to), attributes: kv({ ...attrs, "thread.id": "1" }), status: {} };
}

/** A hold on `key`: acquire [from, from + 10] ok with `fence`, TTL 1000 ms, released at `release`. */
const hold = (key: string, owner: string, fence: number, from: number, release: number) => [
  span("lock.acquire", from, from + 10, { "lock.key": key, "lock.owner": owner, "lock.fence": fence, "lock.ttl_ms": 1000, "lock.outcome": "ok" }),
  span("lock.release", release, release + 2, { "lock.key": key, "lock.owner": owner, "lock.fence": fence, "lock.released": true }),
];

// Key m: a-1 certainly valid [10, 500] as written, b-1 [420, 900]: 80 ms together,
// so certain while the two hosts' bounds add up to under 40 ms at each end.
// Key f: f-1 granted fence 5 at 1010 (host api-1); f-2 invoked at 1030 (api-2) got fence 3.
const lines = [
  instanceLine("api-1", [...hold("m", "a-1", 1, 0, 500), ...hold("f", "f-1", 5, 1000, 1100)], { "host.name": "host-a" }),
  instanceLine("api-2", [...hold("m", "b-1", 2, 410, 900), ...hold("f", "f-2", 3, 1030, 1200)], { "host.name": "host-b" }),
];

async function check(clockError: string | null) {
  const dir = tempDir("fc-clock-in-");
  const file = join(dir, "two-hosts.json");
  writeFileSync(file, lines.join("\n") + "\n");
  const store = tempDir("fc-clock-");
  const cli = runCli("traces", ["--store", store, file, ...(clockError === null ? [] : ["--clock-error", clockError])]);
  const code = await cli.exit;
  const run = cli.stdout().match(/^Run directory: (.*)$/m)?.[1];
  return { code, out: cli.stdout() + cli.stderr(), run, store, results: run ? JSON.parse(readFileSync(join(run, "results.json"), "utf8")) : null };
}

async function reference(run: string) {
  const out = tempDir("fc-clock-ref-");
  const cli = runCli("check", ["--reference", "--out", out, run]);
  const code = await cli.exit;
  return { code, results: JSON.parse(readFileSync(join(out, "results.json"), "utf8")) };
}

describe("fencecheck traces --clock-error", () => {
  it("small bounds: the overlap and the regression are certain (INVALID), in both checkers", async () => {
    const r = await check("5,host-b=10");
    expect(r.code, r.out).toBe(1);
    expect(r.results.anomaly_types.sort()).toEqual(["fence-regression", "mutex-violation"]);
    expect(r.results.possible.anomaly_types).toEqual([]);
    expect(r.out).toMatch(/clocks: host-a ±5 ms \(the default\), host-b ±10 ms/);
    const info = JSON.parse(readFileSync(join(r.run!, "run.json"), "utf8"));
    expect(info.clock_error).toEqual({ default_ms: 5, by_process: { "1": 10 } });
    const ref = await reference(r.run!);
    expect(ref.code).toBe(1);
    expect(ref.results.anomaly_types.sort()).toEqual(r.results.anomaly_types);
    expect(ref.results.possible.anomaly_types).toEqual([]);
  });

  it("large bounds: both only possible, listed apart; VALID; the reference agrees; `fencecheck check` again the same", async () => {
    const r = await check("45");
    expect(r.code, r.out).toBe(0);
    expect(r.results.valid).toBe(true);
    expect(r.results.anomaly_types).toEqual([]);
    expect(r.results.possible.anomaly_types.sort()).toEqual(["fence-regression", "mutex-violation"]);
    expect(r.results.possible.anomalies["mutex-violation"][0].explanation).toMatch(/Possible only/);
    expect(r.out).toMatch(/possible mutex-violation ×\d/);
    const ref = await reference(r.run!);
    expect(ref.code).toBe(0);
    expect(ref.results.possible.anomaly_types.sort()).toEqual(["fence-regression", "mutex-violation"]);
    const again = runCli("check", [r.run!]);
    expect(await again.exit).toBe(0);
    expect(JSON.parse(readFileSync(join(r.run!, "results.json"), "utf8")).possible.anomaly_types.sort()).toEqual(["fence-regression", "mutex-violation"]);
  });

  it("no bound: spans that start on whole milliseconds (the JS SDK's Date.now()) get ±1 ms, said so; both still certain", async () => {
    const r = await check(null);
    expect(r.code).toBe(1);
    expect(r.results.anomaly_types.sort()).toEqual(["fence-regression", "mutex-violation"]);
    expect(r.results.possible.anomaly_types).toEqual([]);
    expect(r.out).toMatch(/clocks: host-a ±1 ms \(its spans start on whole milliseconds\), host-b ±1 ms \(its spans start on whole milliseconds\)/);
  });

  it("no bound and spans with sub-millisecond starts: every host ±0, no clock_error in run.json", async () => {
    const precise = lines.map((l) => l.replace(/"startTimeUnixNano":"(\d+)"/g, (_m, t) => `"startTimeUnixNano":"${BigInt(t) + 1234n}"`).replace(/"endTimeUnixNano":"(\d+)"/g, (_m, t) => `"endTimeUnixNano":"${BigInt(t) + 1234n}"`));
    const dir = tempDir("fc-clock-in-");
    const file = join(dir, "precise.json");
    writeFileSync(file, precise.join("\n") + "\n");
    const cli = runCli("traces", ["--store", tempDir("fc-clock-"), file]);
    expect(await cli.exit).toBe(1);
    expect(cli.stdout()).toMatch(/clocks: host-a ±0 ms \(the default\), host-b ±0 ms \(the default\)/);
    const run = cli.stdout().match(/^Run directory: (.*)$/m)![1];
    expect(JSON.parse(readFileSync(join(run, "results.json"), "utf8")).possible).toBeUndefined();
  });

  it("a thread whose clock stepped back: by lock.seq its spans keep their order; refused without a bound, taken within twice the bound", async () => {
    // c-1's release starts (by its host's clock) 300 ms before its acquire ended, and before it by its start too.
    const stepped = [
      { ...span("lock.acquire", 1000, 1400, { "lock.key": "s", "lock.owner": "c-1", "lock.fence": 1, "lock.ttl_ms": 1000, "lock.outcome": "ok", "lock.seq": 1 }) },
      { ...span("lock.release", 950, 960, { "lock.key": "s", "lock.owner": "c-1", "lock.fence": 1, "lock.released": true, "lock.seq": 2 }) },
    ];
    const dir = tempDir("fc-clock-in-");
    const file = join(dir, "stepped.json");
    writeFileSync(file, instanceLine("api-3", stepped, { "host.name": "host-c" }) + "\n");
    const refused = runCli("traces", ["--store", tempDir("fc-clock-"), file]);
    expect(await refused.exit).toBe(254);
    expect(refused.stderr()).toMatch(/starts 450 ms before span [0-9a-f]+ \(lock\.acquire\).*host "host-c".*--clock-error/);
    const taken = runCli("traces", ["--store", tempDir("fc-clock-"), "--clock-error", "250", file]);
    expect(await taken.exit, taken.stdout() + taken.stderr()).toBe(0);
    expect(taken.stdout()).toMatch(/1 within the clock bound/);
  });

  it("live (--listen): the same bounds, the same certain and possible findings", async () => {
    for (const [bound, code, certain, possible] of [
      ["5,host-b=10", 1, ["fence-regression", "mutex-violation"], []],
      ["45", 0, [], ["fence-regression", "mutex-violation"]],
    ] as const) {
      const free = await takenPort();
      const port = free.port;
      free.close();
      const cli = runCli("traces", ["--listen", String(port), "--window", "0.1", "--clock-error", bound, "--store", tempDir("fc-clock-live-")]);
      expect(await waitFor(() => cli.stdout().includes("listening on"), 15_000), cli.stdout() + cli.stderr()).toBe(true);
      for (const line of lines) {
        const res = await fetch(`http://127.0.0.1:${port}/v1/traces`, { method: "POST", headers: { "Content-Type": "application/json" }, body: line });
        expect(res.status).toBe(200);
      }
      cli.child.kill("SIGINT");
      expect(await cli.exit, cli.stdout() + cli.stderr()).toBe(code);
      const results = JSON.parse(readFileSync(join(cli.stdout().match(/^Run directory: (\S+)/m)![1], "results.json"), "utf8"));
      expect([...results.anomaly_types].sort(), bound).toEqual(certain);
      expect([...(results.possible?.anomaly_types ?? [])].sort(), bound).toEqual(possible);
    }
  });

  it("bad bounds are 254, name what is wrong, and write nothing", async () => {
    for (const [value, said] of [
      ["host-c=5", /no span of the trace is from host "host-c" \(its hosts: host-a, host-b\)/],
      ["5,7", /two bounds for every host/],
      ["host-a=-1", /is not a number of ms >= 0/],
      ["host-a=5,host-a=6", /given twice/],
    ] as const) {
      const r = await check(value);
      expect(r.code, value).toBe(254);
      expect(r.out).toMatch(said);
      expect(existsSync(r.store) ? readdirSync(r.store) : []).toEqual([]);
    }
  });

  it("a malformed clock_error in run.json is 254 for both checkers, naming it", async () => {
    const r = await check("5");
    const path = join(r.run!, "run.json");
    const info = JSON.parse(readFileSync(path, "utf8"));
    writeFileSync(path, JSON.stringify({ ...info, clock_error: { default_ms: "5", by_process: {} } }));
    for (const args of [[r.run!], ["--reference", "--out", tempDir("fc-clock-ref-"), r.run!]]) {
      const cli = runCli("check", args);
      expect(await cli.exit).toBe(254);
      expect(cli.stderr()).toMatch(/run\.json: clock_error\.default_ms must be a number of ms >= 0/);
    }
  });
});
