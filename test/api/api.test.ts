// The programmatic API (`import { runTest, checkRun } from "fencecheck"`): the
// command's options by their camelCase names, every one of them; a run as the
// command makes it, with its results; bad options refused with the command's
// message; a run stopped by its AbortSignal keeps its history; a stored run
// checked into another directory, leaving the run as it was.
import { describe, it, expect } from "vitest";
import { cpSync, existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { BadInput, RunInterrupted, checkRun, runTest, testArgs, type TestOptions } from "../../api/index.ts";
import { TEST_OPTIONS } from "../../runner/index.ts";
import type { OptionSpec } from "../../lib/index.ts";
import { REPO, readNdjson, snapshot, tempRunDir } from "../helpers.ts";

/** An option's camelCase name, as the API takes it. */
const camel = (name: string): string => name.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());

/** A value of each option's kind (its first choice, where it has choices), as a program would pass it. */
function sample(spec: OptionSpec): string | number | boolean | string[] {
  const choice = spec.choices?.[0]?.replace(/:N$/, ":2");
  if (spec.kind === "int" || spec.kind === "number") return spec.min ?? 1;
  if (spec.kind === "flag" || spec.kind === "on-off") return true;
  if (spec.kind === "list") return [choice ?? "0"];
  return choice ?? "x";
}

/** K1 on Redis: client 0 frozen 2.5 s past its 1 s lease writes after client 1 (scenarios/lease.ts). */
const K1: TestOptions = { nemesis: "none", concurrency: 2, workers: 2, ttl: 1000, pause: 2500, pauseClients: "0", work: 0, stagger: 300, acquireTimeout: 3000, rate: 0.01, timeLimit: 1, seed: 1 };

describe("the API's options", () => {
  // Their type is inferred from the same declarations (test/typecheck.test.ts holds it to them).
  it("are the command's options, every one, by its camelCase name", () => {
    for (const spec of TEST_OPTIONS) {
      const argv = testArgs({ [camel(spec.name)]: sample(spec) } as TestOptions);
      expect(argv[0], spec.name).toBe(`--${spec.name}`);
    }
    expect(() => testArgs({ [camel("no-such-option")]: 1 } as TestOptions)).toThrow(BadInput);
  });

  it("become the command's arguments: on-off from booleans, flags only when true, lists joined", () => {
    expect(testArgs({ timeLimit: 5, fence: false, nemesis: ["pause", "kill"], keepData: true, fenceReads: false, pauseClients: [0, 2] })).toEqual([
      "--time-limit", "5", "--fence", "off", "--nemesis", "pause,kill", "--keep-data", "--pause-clients", "0,2",
    ]);
    expect(() => testArgs({ timeLimt: 5 } as TestOptions)).toThrow(/unknown option "timeLimt"; did you mean timeLimit\?/);
    expect(() => testArgs({ "time-limit": 5 } as TestOptions)).toThrow(BadInput);
    expect(() => testArgs({ keepData: "yes" } as unknown as TestOptions)).toThrow(/keepData is true or false/);
  });
});

describe("runTest and checkRun", () => {
  it("runTest makes the command's run, relative paths the caller's (control.cwd), and resolves with its verdict and results.json", async () => {
    const cwd = tempRunDir("fc-api-");
    const lines: string[] = [];
    const r = await runTest({ ...K1, fence: false, store: "here" }, { cwd, log: (l) => lines.push(l) });
    expect(r.exitCode).toBe(1);
    expect(r.valid).toBe(false);
    expect(r.results.anomaly_types).toContain("stale-write-accepted");
    expect(r.runDir.startsWith(join(cwd, "here"))).toBe(true);
    expect(JSON.parse(readFileSync(join(r.runDir, "results.json"), "utf8"))).toEqual(r.results);
    expect(r.summary).toMatch(/^INVALID {2}fenced-write on redis, fencing off/);
    expect(lines.some((l) => l.includes(`run directory ${r.runDir}`))).toBe(true);
  }, 60_000);

  it("bad options reject with the command's message, nothing stored", async () => {
    const cwd = tempRunDir("fc-api-");
    const bad = runTest({ backend: "redis", client: "./nowhere.ts", store: "bad" }, { cwd });
    await expect(bad).rejects.toThrow(BadInput);
    await expect(bad).rejects.toThrow(/--client \.\/nowhere\.ts: no such file/);
    expect(existsSync(join(cwd, "bad"))).toBe(false);
  }, 60_000);

  it("an aborted run rejects with RunInterrupted, its history kept", async () => {
    const store = tempRunDir("fc-api-");
    const stop = new AbortController();
    const lines: string[] = [];
    const run = runTest({ timeLimit: 60, concurrency: 2, store }, { signal: stop.signal, log: (l) => (lines.push(l), l.startsWith("[") && stop.abort()) });
    const err = await run.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RunInterrupted);
    const runDir = (err as RunInterrupted).runDir!;
    expect(readNdjson(join(runDir, "history.ndjson")).length).toBeGreaterThan(1);
  }, 60_000);

  it("checkRun writes into `out` and leaves the run as it was", async () => {
    const run = tempRunDir("fc-api-");
    cpSync(join(REPO, "histories/fixtures/bad/recorded-redis-fenced-write-pause-fence-off"), run, { recursive: true });
    const before = snapshot(run);
    const out = join(tempRunDir("fc-api-"), "audit");
    const r = await checkRun(run, { out });
    expect(r.valid).toBe(false);
    expect(r.exitCode).toBe(1);
    expect(r.results.anomaly_types).toContain("stale-write-accepted");
    expect(r.summary).not.toMatch(/\u001b\[/);
    expect(existsSync(join(out, "report.html"))).toBe(true);
    expect(JSON.parse(readFileSync(join(out, "results.json"), "utf8"))).toEqual(r.results);
    expect(snapshot(run)).toEqual(before);
    await expect(checkRun(join(run, "nothing-here"))).rejects.toThrow(BadInput);
  });
});
