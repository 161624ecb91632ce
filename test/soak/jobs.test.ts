// A soak with --jobs N runs up to N runs at once, and proves the same as one at
// a time: the same runs, seeds and verdicts; with --metrics-port, job j's run
// serves on PORT + j; Ctrl-C stops every run going and the summary covers them.
import { describe, it, expect, afterAll } from "vitest";
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { availableParallelism } from "node:os";
import { parseSoakArgs } from "../../cli/soak-options.ts";
import { runSeed, withMetricsPort, type RunRecord, type SoakSummary } from "../../soak/index.ts";
import { freePort, releasePorts, reservePort } from "../../cluster/ports.ts";
import { processesMentioning, runCli, tempRunDir, waitFor } from "../helpers.ts";

const RUN = { backend: "redis", nemesis: "none", concurrency: 2, workers: 1, fence: "on" };
const root = tempRunDir("fc-soak-jobs-");
afterAll(() => rmSync(root, { recursive: true, force: true }));

function matrix(name: string, timeLimit: number): string {
  const file = join(root, `${name}.json`);
  writeFileSync(file, JSON.stringify({ name, configurations: ["a", "b"].map((c) => ({ name: c, options: { ...RUN, "time-limit": timeLimit }, expect: "valid" })) }));
  return file;
}
/** Two free consecutive ports, given back for the soak to take. */
async function metricsPorts(): Promise<number> {
  for (;;) {
    const port = await freePort();
    const next = reservePort(port + 1);
    releasePorts([port, port + 1]);
    if (next) return port;
  }
}
const soakDir = (store: string): string => join(store, "soaks", readdirSync(join(store, "soaks")).filter((n) => n !== "latest")[0]);
const summaryOf = (store: string): SoakSummary => JSON.parse(readFileSync(join(soakDir(store), "summary.json"), "utf8"));
const runs = (s: SoakSummary): RunRecord[] => s.configurations.flatMap((c) => c.runs);

describe("soak --jobs", () => {
  it("defaults to half the cores, at least 1; refuses 0 and a metrics port range past 65535", () => {
    const parse = (...args: string[]) => parseSoakArgs(["--preset", "smoke", ...args]).request;
    expect(parse()).toMatchObject({ jobs: Math.max(1, Math.floor(availableParallelism() / 2)) });
    expect(parse("--jobs", "3")).toMatchObject({ jobs: 3 });
    expect(() => parse("--jobs", "0")).toThrow(/--jobs/);
    expect(() => parse("--jobs", "4", "--metrics-port", "65534")).toThrow(/--metrics-port 65534 with --jobs 4: job j serves on port 65534 \+ j, and 65537 is past 65535/);
    expect(withMetricsPort(["--seed", "1", "--metrics-port", "9000"], 9001)).toEqual(["--seed", "1", "--metrics-port", "9001"]);
  });

  it("runs two at once: the runs and seeds one at a time would run, in less time than its runs add up to; job j serves metrics on PORT + j", async () => {
    const m = matrix("jobs", 3);
    const port = await metricsPorts();
    const two = runCli("soak", ["--matrix", m, "--test-count", "2", "--seed", "9", "--jobs", "2", "--metrics-port", String(port), "--store", join(root, "two")]);
    expect(await two.exit, two.stderr()).toBe(0);
    expect(two.stderr()).toMatch(/\(2 configurations x 2\), 2 runs at once, seed 9/);
    expect(two.stderr()).toContain(`job j of 2 serves its run's on port ${port} + j`);
    const s2 = summaryOf(join(root, "two"));
    // The runs and seeds one soak at a time plans (plan.ts), each valid.
    const expected = [0, 1].flatMap((i) => ["a", "b"].map((c) => `${c}#${i} seed ${runSeed(9, c, i)} valid`)).sort();
    expect(runs(s2).map((r) => `${r.config}#${r.index} seed ${r.seed} ${r.status}`).sort()).toEqual(expected);
    // Runs overlapped: the soak took less than its runs end to end (one at a time, it takes more).
    expect(s2.wall_s).toBeLessThan(runs(s2).reduce((t, r) => t + r.wall_s, 0) * 0.8);
    // Each run got its job's port: both jobs' ports are used, nothing else.
    const ports = runs(s2).map((r) => r.argv[r.argv.indexOf("--metrics-port") + 1]);
    expect(new Set(ports)).toEqual(new Set([String(port), String(port + 1)]));
    expect(JSON.parse(readFileSync(join(soakDir(join(root, "two")), "soak.json"), "utf8")).options.jobs).toBe(2);
  }, 90_000);

  it("Ctrl-C stops every run going: each heals and tears down, the summary covers them, exit 130, no process left", async () => {
    const store = join(root, "int");
    const soak = runCli("soak", ["--matrix", matrix("int", 20), "--test-count", "2", "--jobs", "2", "--store", store]);
    const out = (name: string) => {
      const f = existsSync(join(store, "soaks")) ? join(soakDir(store), "output", name) : "";
      return f && existsSync(f) ? readFileSync(f, "utf8") : "";
    };
    // Both jobs' runs are under way.
    expect(await waitFor(() => /run directory/.test(out("a-0.log")) && /run directory/.test(out("b-0.log")), 60_000, 100), soak.stderr()).toBe(true);
    await new Promise((r) => setTimeout(r, 1500));
    process.kill(-soak.child.pid!, "SIGINT");
    expect(await soak.exit, soak.stderr()).toBe(130);
    const s = summaryOf(store);
    expect(s.interrupted).toBe(true);
    expect(s.configurations.map((c) => c.runs.map((r) => r.status))).toEqual([["interrupted"], ["interrupted"]]);
    expect(s.configurations.flatMap((c) => c.not_run.map((r) => r.reason))).toEqual([expect.stringMatching(/interrupted \(SIGINT\) before it started/), expect.stringMatching(/interrupted \(SIGINT\) before it started/)]);
    expect(processesMentioning(store)).toEqual([]);
  }, 90_000);
});
