// The worked example of docs/own-lock.md, run as a reader types it: each command
// of the block under its `worked-example` marker, in an empty directory, with
// one change: the package is this checkout's `npm pack` tarball where the page
// says `github:OWNER/fencecheck#v0.1.0` (nothing is published to take it from).
// A page whose example stops working fails here.
import { describe, it, expect } from "vitest";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { REPO } from "../helpers.ts";
import { ok, run } from "./team.ts";

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

describe("docs/own-lock.md's worked example", () => {
  it("runs as written: the adapter's first run VALID, without fencing INVALID, and the audit of it", async () => {
    const commands = workedExample("docs/own-lock.md");
    expect(commands[0]).toBe("npm init -y");
    const dir = mkdtempSync(join(tmpdir(), "fc-guide-"));
    const packed = await run("npm", ["pack", "--ignore-scripts", "--pack-destination", dir, REPO], { cwd: dir });
    expect(packed.code, ok(packed)).toBe(0);
    const tarball = join(dir, packed.stdout.trim().split("\n").pop()!);
    const results: Array<{ command: string; code: number; out: string }> = [];
    for (const command of commands) {
      const line = command.replace("github:OWNER/fencecheck#v0.1.0", tarball);
      const r = await run("bash", ["-c", line], { cwd: dir });
      results.push({ command, code: r.code, out: r.stdout + r.stderr });
      if (r.code !== 0 && !command.includes("--fence off") && !command.includes("check")) break;
    }
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
  }, 240_000);
});
