// A soak stopped part-way: Ctrl-C (SIGINT to its process group, as a terminal
// sends it) lets the current run heal and tear down, writes the summary of what
// finished and exits 130 with nothing left running; a soak killed hard (SIGKILL)
// takes its current run down with it through the run's lifeline, and
// `--summarize` turns what it left into a summary, checking the interrupted
// run's history.
import { describe, it, expect } from "vitest";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pidAlive, processesMentioning, runCli, tempRunDir, waitFor } from "../helpers.ts";
import type { RunRecord, SoakSummary } from "../../soak/index.ts";

const RUN = { backend: "redis", nemesis: "pause", "pause-min": 200, "pause-max": 400, concurrency: 2, workers: 1, work: 5 };

function setUp(prefix: string, timeLimit: number, names: string[]): { store: string; matrix: string } {
  const store = tempRunDir(prefix);
  const matrix = join(store, "m.json");
  writeFileSync(matrix, JSON.stringify({ name: "stops", configurations: names.map((name) => ({ name, options: { ...RUN, "time-limit": timeLimit }, expect: "valid" })) }));
  return { store, matrix };
}

const soakDir = (store: string): string => {
  const names = existsSync(join(store, "soaks")) ? readdirSync(join(store, "soaks")).filter((n) => n !== "latest") : [];
  return names.length ? join(store, "soaks", names[0]) : "";
};
const output = (store: string, name: string): string => {
  try {
    return readFileSync(join(soakDir(store), "output", name), "utf8");
  } catch {
    return "";
  }
};
const records = (store: string): RunRecord[] => {
  try {
    return readFileSync(join(soakDir(store), "runs.ndjson"), "utf8").trim().split("\n").filter(Boolean).map((l) => JSON.parse(l));
  } catch {
    return [];
  }
};

describe("a soak stopped part-way", () => {
  it("Ctrl-C: the current run heals and tears down, the summary covers what finished, exit 130, no process left", async () => {
    // 5 s: the first run whole, and the second still going 2 s after its clients start.
    const { store, matrix } = setUp("fc-soak-int-", 5, ["first", "second", "third"]);
    const soak = runCli("soak", ["--matrix", matrix, "--jobs", "1", "--store", store]);
    // The second run is under way (the first has its record) and has clients running.
    expect(await waitFor(() => records(store).length === 1 && /\[\d+s, \d+s left\]|run directory/.test(output(store, "second-0.log")), 60_000, 100), soak.stderr()).toBe(true);
    await new Promise((r) => setTimeout(r, 2000));
    process.kill(-soak.child.pid!, "SIGINT");
    expect(await soak.exit, soak.stderr()).toBe(130);
    expect(soak.stdout()).toMatch(/^INTERRUPTED/);
    const s: SoakSummary = JSON.parse(readFileSync(join(soakDir(store), "summary.json"), "utf8"));
    expect(s.interrupted).toBe(true);
    expect(s.exit_code).toBe(130);
    const [first, second, third] = s.configurations;
    expect(first.runs.map((r) => r.status)).toEqual(["valid"]);
    expect(second.runs.map((r) => r.status)).toEqual(["interrupted"]);
    expect(third.runs).toEqual([]);
    expect(third.not_run.map((r) => r.reason)).toEqual([expect.stringMatching(/interrupted \(SIGINT\) before it started/)]);
    // The interrupted run kept its history and was healed: every fault it started, it ended.
    const history = readFileSync(join(soakDir(store), second.runs[0].run_dir!, "history.ndjson"), "utf8");
    expect(history.split("\n").filter((l) => l.includes('"start-pause"')).length).toBe(history.split("\n").filter((l) => l.includes('"stop-pause"')).length);
    expect(processesMentioning(store)).toEqual([]);
  });

  it("killed hard, the soak's run stops too; --summarize checks the history it left and lists what never ran", async () => {
    const { store, matrix } = setUp("fc-soak-kill-", 4, ["first", "second", "third"]);
    const soak = runCli("soak", ["--matrix", matrix, "--jobs", "1", "--store", store]);
    expect(await waitFor(() => records(store).length === 1 && /run directory/.test(output(store, "second-0.log")), 60_000, 100), soak.stderr()).toBe(true);
    await new Promise((r) => setTimeout(r, 1500));
    // The soak alone, as the OOM killer or a CI timeout would: its run follows it out.
    process.kill(soak.child.pid!, "SIGKILL");
    await soak.exit;
    expect(await waitFor(() => processesMentioning(store).length === 0, 20_000, 200), processesMentioning(store).join("\n")).toBe(true);
    const dir = soakDir(store);
    expect(existsSync(join(dir, "summary.json"))).toBe(false);

    const summarized = runCli("soak", ["--summarize", dir]);
    const code = await summarized.exit;
    expect(code, summarized.stderr()).toBe(0);
    expect(summarized.stderr()).toMatch(/second #0: the soak stopped during this run; checking the history it left/);
    const s: SoakSummary = JSON.parse(readFileSync(join(dir, "summary.json"), "utf8"));
    const [first, second, third] = s.configurations;
    expect(first.runs.map((r) => [r.status, r.incomplete ?? false])).toEqual([["valid", false]]);
    expect(second.runs).toHaveLength(1);
    expect(second.runs[0].incomplete).toBe(true);
    expect(second.runs[0].status).toBe("valid");
    expect(existsSync(join(dir, second.runs[0].run_dir!, "results.json"))).toBe(true);
    expect(third.not_run.map((r) => r.reason)).toEqual(["the soak stopped before this run started"]);
    expect(existsSync(join(dir, "summary.html"))).toBe(true);
    expect(summarized.stdout()).toMatch(/not run/i);

    const notASoak = runCli("soak", ["--summarize", store]);
    expect(await notASoak.exit).toBe(254);
    expect(notASoak.stderr()).toMatch(/is not a soak directory: it has no soak\.json/);
    expect(pidAlive(soak.child.pid!)).toBe(false);
  });
});
