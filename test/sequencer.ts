// The order the suite's files start in: longest first. Four files run at a
// time (vitest.config.ts), and the suite ends when the last one does, so a
// minute-long file that starts last adds its whole minute to the wall time;
// started first, it runs beside the short ones. vitest's own order does this
// only from its cache of an earlier run, which a fresh clone (CI) does not
// have: it then starts the largest files first, and the slowest ones here are
// small (a test of a few lines that waits out four runs). So the durations of
// the last full run are kept in test/durations.json (scripts/test-durations.mjs
// writes them), and a file not in it counts as a long one, so that a new file
// never ends up at the tail.
import { relative } from "node:path";
import { readFileSync } from "node:fs";
import { BaseSequencer, type TestSpecification } from "vitest/node";

const DURATIONS: Record<string, number> = JSON.parse(readFileSync(new URL("./durations.json", import.meta.url), "utf8"));
const UNKNOWN_MS = 60_000;

export default class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root;
    const ms = (f: TestSpecification): number => DURATIONS[relative(root, f.moduleId)] ?? UNKNOWN_MS;
    return [...files].sort((a, b) => ms(b) - ms(a));
  }
}
