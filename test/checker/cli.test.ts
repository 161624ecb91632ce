// `fencecheck check <dir>` as a user runs it: exit codes, files written or left alone.
import { execFile } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { decision, History, tempDir, writeRun } from "./build.ts";
import { cliArgs, snapshot } from "../helpers.ts";

const ROOT = resolve(import.meta.dirname, "../..");

function runCheck(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(process.execPath, [...cliArgs("check"), ...args], { cwd: ROOT }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === "number" ? err.code : -1) : 0;
      done({ code, stdout, stderr });
    });
  });
}

function cleanRun(): History {
  const h = new History();
  h.acquire(0, "k", [0, 1], "A", 1, 1000);
  h.write(0, "k", [2, 3], "A", 1, "a");
  h.release(0, "k", [4, 5], "A", 1);
  return h;
}

describe("check CLI", { timeout: 60_000 }, () => {
  it.concurrent("exits 0 for a valid run and writes results.json and report.html", async () => {
    const dir = writeRun(cleanRun(), [decision(1, 2.5, "k", 0, "A", 1, null, true, "a")]);
    const { code, stdout } = await runCheck(dir);
    expect(code).toBe(0);
    expect(stdout).toContain("VALID");
    expect(JSON.parse(readFileSync(join(dir, "results.json"), "utf8")).valid).toBe(true);
    expect(existsSync(join(dir, "report.html"))).toBe(true);
  });

  it.concurrent("exits 1 for an invalid run", async () => {
    const h = cleanRun();
    h.acquire(1, "k", [10, 11], "B", 1, 1000);
    const dir = writeRun(h);
    const { code } = await runCheck(dir);
    expect(code).toBe(1);
    const results = JSON.parse(readFileSync(join(dir, "results.json"), "utf8"));
    expect(results.valid).toBe(false);
    expect(results.anomaly_types).toEqual(["duplicate-fence"]);
  });

  it.concurrent("--out DIR: results.json and report.html go to DIR, the run is left as it was, and the command says which", async () => {
    const h = cleanRun();
    h.acquire(1, "k", [10, 11], "B", 1, 1000);
    const dir = writeRun(h);
    const before = snapshot(dir);
    const out = join(tempDir(), "audit", "of-run");
    const { code, stdout } = await runCheck(dir, "--out", out);
    expect(code).toBe(1);
    expect(stdout).toContain(`Wrote results.json and report.html into ${out}; the run ${dir} is untouched`);
    expect(JSON.parse(readFileSync(join(out, "results.json"), "utf8")).anomaly_types).toEqual(["duplicate-fence"]);
    expect(existsSync(join(out, "report.html"))).toBe(true);
    expect(snapshot(dir)).toEqual(before);
    // Without --out the run is rewritten, and it says so.
    const inRun = await runCheck(dir);
    expect(inRun.stdout).toContain(`Wrote results.json and report.html into the run, ${dir} (--out DIR leaves a run untouched)`);
    expect(existsSync(join(dir, "results.json"))).toBe(true);
  });

  it.concurrent("--out a path that cannot be a directory: 254 naming it, before the run is read, and nothing made", async () => {
    const h = cleanRun();
    const dir = writeRun(h);
    const before = snapshot(dir);
    const file = join(tempDir(), "a-file");
    writeFileSync(file, "x");
    for (const [out, why] of [
      [file, /the output directory .*a-file is a file, not a directory/],
      [join(file, "under"), /the output directory .*a-file\/under cannot be made: a part of its path is a file/],
    ] as const) {
      const { code, stderr } = await runCheck(dir, "--out", out);
      expect(code, stderr).toBe(254);
      expect(stderr).toMatch(why);
    }
    // The path is judged before the run: a run directory that does not exist is not what it names.
    const { code, stderr } = await runCheck(join(dir, "no-such-run"), "--out", file);
    expect(code).toBe(254);
    expect(stderr).toMatch(/is a file, not a directory/);
    expect(snapshot(dir)).toEqual(before);
    expect(readFileSync(file, "utf8")).toBe("x");
  });

  it.concurrent("exits 2 when the run cannot be fully checked", async () => {
    const { code, stderr } = await runCheck(writeRun(cleanRun(), []));
    expect(code).toBe(2);
    expect(stderr).toMatch(/warning: cannot fully check the run/);
  });

  it.concurrent("exits 254 for a missing directory or no arguments", async () => {
    const missing = await runCheck(join(tempDir(), "nope"));
    expect(missing.code).toBe(254);
    expect(missing.stderr).toMatch(/does not exist/);
    expect((await runCheck()).code).toBe(254);
    const noHistory = await runCheck(tempDir());
    expect(noHistory.code).toBe(254);
    expect(noHistory.stderr).toMatch(/no history\.ndjson/);
  });

  it.concurrent("exits 254 on a malformed line and changes nothing", async () => {
    const lines = cleanRun().ndjson().split("\n");
    lines[3] = `{"index":2,"time":"soon"}`;
    const dir = writeRun(lines.join("\n"));
    writeFileSync(join(dir, "results.json"), "previous verdict\n");
    const { code, stderr } = await runCheck(dir);
    expect(code).toBe(254);
    expect(stderr).toContain(`history.ndjson line 4: "time" must be an integer >= 0`);
    expect(readFileSync(join(dir, "results.json"), "utf8")).toBe("previous verdict\n");
    expect(existsSync(join(dir, "report.html"))).toBe(false);
  });

  it.concurrent("prints a cut-short last line as a warning and checks the rest", async () => {
    const dir = writeRun(cleanRun().ndjson() + `{"index":6,"ti`);
    const { code, stderr } = await runCheck(dir);
    expect(code).toBe(0);
    expect(stderr).toMatch(/warning: history\.ndjson line 8: .*cut short/);
  });
});
