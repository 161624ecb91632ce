// The worked examples of docs/own-lock.md (a TypeScript adapter) and
// docs/adapter-protocol.md (a Python adapter program), run as a reader types
// them: each command of the block under a page's `worked-example` marker, in an
// empty directory, with one change: the package is this checkout's `npm pack`
// tarball (packed once per suite run, test/package/team.ts) where the page says
// `github:OWNER/fencecheck#v0.1.0` (nothing is published to take it from). A page
// whose example stops working fails here.
import { describe, it, expect } from "vitest";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { REPO, TEMP_DIRS } from "../helpers.ts";
import { packed, run } from "./team.ts";

/** The commands of the block that follows the marker, without their `$ ` prompt. */
function workedExample(page: string): string[] {
  const lines = readFileSync(join(REPO, page), "utf8").split("\n");
  const start = lines.findIndex((l) => l.includes("<!-- worked-example"));
  expect(start, `${page} has no worked-example marker`).toBeGreaterThan(-1);
  const commands: string[] = [];
  for (const line of lines.slice(start + 1)) {
    if (line.startsWith("    $ ")) commands.push(line.slice("    $ ".length));
    else if (commands.length && line.trim() === "") break;
  }
  return commands;
}

describe("the docs' worked examples", () => {
  it("run as written: own-lock.md's TypeScript adapter and adapter-protocol.md's Python one, each VALID fenced and INVALID unfenced, and the audit", async () => {
    const commands = workedExample("docs/own-lock.md");
    expect(commands[0]).toBe("npm init -y");
    const dir = mkdtempSync(join(tmpdir(), "fc-guide-"));
    TEMP_DIRS.push(dir);
    const tarball = await packed();
    const results = await runAll(commands, dir, tarball);
    const find = (part: string) => results.find((r) => r.command.includes(part))!;
    for (const setup of ["npm init", "npm install", "cp "]) expect(find(setup)?.code, find(setup)?.out).toBe(0);
    const fenced = results.find((r) => r.command.includes("fencecheck test") && !r.command.includes("--fence off"))!;
    expect([fenced.code, fenced.out]).toEqual([0, expect.stringMatching(/^VALID {2}fenced-write on redis, fencing on/m)]);
    const unfenced = find("--fence off");
    expect(unfenced.code, unfenced.out).toBe(1);
    expect(unfenced.out).toMatch(/^INVALID .*\n\s+stale-write-accepted ×\d+/m);
    const audit = find("fencecheck check");
    expect(audit.code, audit.out).toBe(1);
    expect(audit.out).toContain("Wrote results.json and report.html into audit");
    expect(results.length).toBe(commands.length);

    // The Python adapter of adapter-protocol.md, in the same kind of directory (its npm steps find the tarball installed).
    const python = await runAll(workedExample("docs/adapter-protocol.md"), dir, tarball);
    const pyFenced = python.find((r) => r.command.includes("fencecheck test") && !r.command.includes("--fence off"))!;
    // VALID, or what the page says a pause between the grant and the counter's
    // INCR gives: INVALID with fence-regression alone, the resource safe.
    const verdict = pyFenced.out.match(/^(VALID|INVALID) {2}fenced-write on redis, fencing on/m)?.[1];
    expect(verdict, pyFenced.out).toBeDefined();
    expect([pyFenced.code, anomalyTypes(pyFenced.out)], pyFenced.out).toEqual(verdict === "VALID" ? [0, []] : [1, ["fence-regression"]]);
    expect(pyFenced.out).toContain("my-lock.adapter.json");
    const pyUnfenced = python.find((r) => r.command.includes("--fence off"))!;
    expect(pyUnfenced.code, pyUnfenced.out).toBe(1);
    expect(pyUnfenced.out).toMatch(/^INVALID .*\n\s+stale-write-accepted ×\d+/m);
  }, 300_000);
});

/** The anomaly types a verdict's summary lists (`  type ×n: ...`), in order. */
function anomalyTypes(out: string): string[] {
  return [...out.matchAll(/^ {2}([a-z-]+) ×\d+/gm)].map((m) => m[1]);
}

/** Runs each command in `dir` with bash, the tarball for the page's git address; a set-up step that fails ends it. */
async function runAll(commands: string[], dir: string, tarball: string): Promise<Array<{ command: string; code: number; out: string }>> {
  const results: Array<{ command: string; code: number; out: string }> = [];
  for (const command of commands) {
    const r = await run("bash", ["-c", command.replace("github:OWNER/fencecheck#v0.1.0", tarball)], { cwd: dir });
    results.push({ command, code: r.code, out: r.stdout + r.stderr });
    // A verdict's exit code is the finding; any other step must work.
    if (r.code !== 0 && !command.includes("npx fencecheck ")) throw new Error(`${command}: exit ${r.code}\n${r.stdout}${r.stderr}`);
  }
  return results;
}
