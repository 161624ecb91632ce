// A large run's report drawn from what the checker's pass kept (reports/checked.ts)
// must have the figures of the report's own pass over the files (digest.ts
// digestRun): the same overview, nemesis events and checkpoints.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { generateRun } from "../../bench/checker-history.ts";
import { checkRun, checkRunKeeping } from "../../checker/index.ts";
import { digestOfCheck } from "../../reports/checked.ts";
import { CHECKPOINT_EVERY, digestRun } from "../../reports/digest.ts";

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

describe("the digest of a checked run", () => {
  for (const fencing of [false, true]) {
    it(`equals the report's own pass over the files (fencing ${fencing ? "on" : "off"})`, async () => {
      const dir = await mkdtemp(join(tmpdir(), "report-checked-"));
      dirs.push(dir);
      generateRun(dir, { events: 30_000, seed: fencing ? 11 : 4, keys: 4, clients: 20, workers: 4, fencing });
      const { results, run } = await checkRunKeeping(dir, {}, CHECKPOINT_EVERY);
      const fromCheck = digestOfCheck(run);
      const own = await digestRun(dir);
      expect(fromCheck).not.toBeNull();
      expect(own).not.toBeNull();
      expect(fromCheck!.nemesis.length).toBeGreaterThan(0);
      expect(fromCheck!.checkpoints.length).toBeGreaterThan(10);
      expect(fromCheck).toEqual(own);
      // Keeping what the pass read does not change the verdict.
      const plain = await checkRun(dir);
      const strip = (r: typeof results) => JSON.parse(JSON.stringify(r, (k, v) => (k === "elapsed_ms" ? 0 : v))) as unknown;
      expect(strip(results)).toEqual(strip(plain.results));
    }, 60_000);
  }
});
