// A lock client of the user's in one file (--client ./path): the example adapter
// runs as the shipped clients do, the same adapter with an owner-blind release is
// caught, and a module that is no adapter is refused before anything starts.
import { describe, it, expect } from "vitest";
import { join } from "node:path";
import { readdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { tempRunDir, runCli, latestRun, REPO, grantsIn } from "../helpers.ts";

const run = ["--concurrency", "4", "--workers", "2", "--nemesis", "pause", "--nemesis-interval", "1", "--time-limit", "6", "--seed", "3"];

function results(store: string) {
  const dir = realpathSync(latestRun(store));
  return { run: JSON.parse(readFileSync(join(dir, "run.json"), "utf8")), results: JSON.parse(readFileSync(join(dir, "results.json"), "utf8")) };
}

describe("--client with an adapter module", () => {
  it("the example adapter under pauses, fencing on: valid, the module named in run.json", async () => {
    const store = tempRunDir("fc-adapter-");
    const cli = runCli("test", [...run, "--client", "./examples/redis-lock-adapter.ts", "--store", store]);
    expect(await cli.exit, cli.stdout() + cli.stderr()).toBe(0);
    const r = results(store);
    expect(r.run.options.client).toMatch(/\/examples\/redis-lock-adapter\.ts$/);
    expect(r.results.valid).toBe(true);
  });

  it("the same adapter releasing without an owner check is caught: mutex-violation", async () => {
    const store = tempRunDir("fc-adapter-");
    // Every pause outlives the TTL (1000 ms), so each of the run's pauses of a holder
    // can set the owner-blind DEL on the next holder's key; with the default
    // shortest pause (ttl / 2) one CI run in many had only one pause that did, and
    // woke when nobody held the lock: a stale write, but no deleted lock.
    const longPauses = ["--pause-min", "1500", "--pause-max", "2500"];
    const cli = runCli("test", [...run, ...longPauses, "--client", "./examples/broken-release-adapter.ts", "--fence", "off", "--store", store]);
    expect(await cli.exit, cli.stdout() + cli.stderr()).toBe(1);
    expect(results(store).results.anomaly_types).toContain("mutex-violation");
  });

  it("an adapter whose lock issues no fences takes them from a Redis counter with --fence-source single", async () => {
    const store = tempRunDir("fc-adapter-");
    const unfenced = join(tempRunDir("fc-adapter-mods-"), "unfenced.ts");
    writeFileSync(
      unfenced,
      `import example from ${JSON.stringify(join(REPO, "examples/redis-lock-adapter.ts"))};\n` +
        `export default { ...example, fences: false, create: (ctx) => { const c = example.create(ctx); const acquire = c.acquire.bind(c);\n` +
        `  c.acquire = async (...a) => { const r = await acquire(...a); return r.type === "ok" ? { ...r, value: { ...r.value, fence: null } } : r; }; return c; } };\n`,
    );
    const refused = runCli("test", [...run, "--client", unfenced, "--store", store]);
    expect(await refused.exit).toBe(254);
    expect(refused.stderr()).toMatch(/issues no fencing tokens .*--fence-source single/);
    const cli = runCli("test", [...run, "--client", unfenced, "--fence-source", "single", "--store", store]);
    expect(await cli.exit, cli.stdout() + cli.stderr()).toBe(0);
    const events = readFileSync(join(realpathSync(latestRun(store)), "history.ndjson"), "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
    const fences = grantsIn(events).map((e) => e.value.fence);
    expect(fences.length).toBeGreaterThan(0);
    expect(fences.every((f) => typeof f === "number")).toBe(true);
    // One counter: every hold a new fence.
    expect(new Set(fences).size).toBe(fences.length);
  });

  const dir = tempRunDir("fc-adapter-mods-");
  const module = (name: string, text: string) => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };
  const client = `{ acquire: async () => ({ type: "fail", error: "busy" }), renew: async () => ({ type: "fail", error: "not-owner" }), release: async () => ({ type: "ok", value: { released: false } }), close: async () => {} }`;
  const cases: Array<[string, string[], RegExp]> = [
    ["a module without the exports", ["--client", module("empty.ts", "export const x = 1;\n")], /is not a lock client adapter: its default export lacks "describe".*"backends".*"fences".*"create"/],
    ["a client without release()", ["--client", module("norelease.ts", `export default { describe: "d", backends: ["redis"], fences: true, create: () => ({ acquire() {}, renew() {}, close() {} }) };\n`)], /has no release\(\)/],
    ["an adapter for another backend", ["--client", module("etcd.ts", `export default { describe: "d", backends: ["etcd"], fences: true, create: () => (${client}) };\n`)], /works with --backend etcd \(its "backends"\), not --backend redis/],
    ["--fence-source for an adapter that issues its own fences", ["--client", "./examples/redis-lock-adapter.ts", "--fence-source", "single"], /issues its own fencing tokens .* --fence-source single would mean nothing/],
    ["no fences with --fence on", ["--client", module("nofence.ts", `export default { describe: "d", backends: ["redis"], fences: false, create: () => (${client}) };\n`)], /issues no fencing tokens .* use --fence off/],
    ["a module that fails to load", ["--client", module("throws.ts", `throw new Error("boom at import");\n`)], /the module does not load: boom at import/],
    ["a path with no file", ["--client", "./no/such-lock.ts"], /--client \.\/no\/such-lock\.ts: no such file/],
    ["an unknown client name", ["--client", "consul"], /--client: unknown value "consul"; choose from redis, .*or give the path of an adapter module/],
  ];
  for (const [what, args, message] of cases)
    it(`${what}: exit 254 naming it, nothing stored`, async () => {
      const store = tempRunDir("fc-adapter-bad-");
      const cli = runCli("test", [...args, "--time-limit", "1", "--store", store]);
      expect(await cli.exit, cli.stderr()).toBe(254);
      expect(cli.stderr()).toMatch(message);
      expect(readdirSync(store).filter((f) => f !== "logs")).toEqual([]);
    });
});
