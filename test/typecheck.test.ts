// The type check of the sources, tests and scripts (tsconfig.check.json, as
// `npm run typecheck`), as one test of the suite: it runs beside the other files
// rather than before all of them, which on two cores was 17 s of the suite's wall
// time spent on nothing else.
import { describe, it, expect } from "vitest";
import { execFile } from "node:child_process";
import { join } from "node:path";
import { REPO } from "./helpers.ts";

describe("the type check", () => {
  it("tsc finds no type error (tsconfig.check.json)", async () => {
    const tsc = join(REPO, "node_modules/typescript/bin/tsc");
    const r = await new Promise<{ code: number; out: string }>((resolve) =>
      execFile(process.execPath, [tsc, "-p", "tsconfig.check.json", "--noEmit"], { cwd: REPO, maxBuffer: 16 << 20 }, (err, stdout, stderr) =>
        resolve({ code: err ? (typeof err.code === "number" ? err.code : 255) : 0, out: String(stdout) + String(stderr) }),
      ),
    );
    expect(r.code, r.out).toBe(0);
  }, 180_000);
});
