// run.json is rewritten while a run goes on, and `npm run serve` (or a user's
// script) may read it at any moment: a reader must see a whole file, old or new.
import { describe, it, expect } from "vitest";
import { spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { tempRunDir } from "../helpers.ts";

const ROOT = resolve(import.meta.dirname, "../..");

describe("writeJson", () => {
  it("a reader polling the file while another process rewrites it never sees cut-off JSON, and no temporary file stays", async () => {
    const dir = tempRunDir("fc-json-");
    const path = join(dir, "run.json");
    // Large enough that a plain write takes several syscalls, which a reader can fall between.
    const code = `
      const { writeJson } = await import(${JSON.stringify(join(ROOT, "store/run-dir.ts"))});
      const big = { links: Array.from({ length: 20000 }, (_, i) => ({ name: "worker-" + i, port: i })) };
      for (let i = 0; i < 150; i++) writeJson(${JSON.stringify(path)}, { ...big, round: i });
    `;
    const writer = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", code], { cwd: ROOT, stdio: "inherit" });
    const done = new Promise<number | null>((r) => writer.on("exit", r));
    let finished = false;
    void done.then(() => (finished = true));
    let reads = 0;
    let cut = 0;
    while (!finished) {
      if (existsSync(path)) {
        reads++;
        try {
          JSON.parse(readFileSync(path, "utf8"));
        } catch {
          cut++;
        }
      }
      await new Promise((r) => setImmediate(r));
    }
    expect(await done).toBe(0);
    expect(reads).toBeGreaterThan(10);
    expect(cut).toBe(0);
    expect(JSON.parse(readFileSync(path, "utf8")).round).toBe(149);
    expect(readdirSync(dir).filter((n) => n.endsWith(".tmp"))).toEqual([]);
  });
});
