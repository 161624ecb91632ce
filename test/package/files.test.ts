// What `npm pack` puts in the tarball: every shipped adapter program's manifest,
// its environment file and the sources beside it. A manifest left out makes every
// command of an installed fencecheck fail (the client list reads each manifest),
// which the team-project tests show only after minutes; this says which file at once.
import { describe, it, expect } from "vitest";
import { execFileSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { REPO } from "../helpers.ts";
import { CLIENTS } from "../../backends/index.ts";

describe("the packed tarball", () => {
  it("holds every shipped adapter program: its manifest and everything in its folder", () => {
    const out = execFileSync("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], { cwd: REPO, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] });
    const packed = new Set((JSON.parse(out) as Array<{ files: Array<{ path: string }> }>)[0].files.map((f) => f.path));
    const programs = Object.values(CLIENTS).flatMap((k) => (k.program ? [k.program] : []));
    expect(programs.length).toBeGreaterThan(10);
    const missing: string[] = [];
    for (const manifest of new Set(programs)) {
      const folder = dirname(join(REPO, manifest));
      for (const f of readdirSync(folder, { withFileTypes: true }).filter((e) => e.isFile())) {
        const path = relative(REPO, join(folder, f.name));
        if (!packed.has(path)) missing.push(path);
      }
    }
    expect(missing, "add them to package.json's files").toEqual([]);
  }, 60_000);
});
