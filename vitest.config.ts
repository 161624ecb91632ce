import { defineConfig } from "vitest/config";
import LongestFirst from "./test/sequencer.ts";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts", "backends/*/test/*.test.ts"],
    // Library tests (*.library.test.ts): whole runs of one library each, what the
    // libraries preset's soak runs too. They are `npm run test:libraries`
    // (vitest.libraries.config.ts), not every `npm test`, which keeps a whole run
    // of every backend and one adapter run per language.
    exclude: ["**/node_modules/**", "**/*.library.test.ts"],
    globalSetup: ["test/build-once.ts"],
    // Each file's temporary run directories removed when it is done (test/cleanup.ts).
    setupFiles: ["test/cleanup.ts"],
    // The runs a test starts in-process start their workers, resource and proxy
    // from dist/ (lib/paths.ts), as a user's run does: no TypeScript compiled at
    // each child's start, which on two cores was minutes of the suite.
    env: { FENCECHECK_ENTRIES: "dist" },
    // Integration tests start real servers and worker processes, and spend most of
    // their time waiting out a run's time limit. Three files at a time: measured
    // 2026-11-30 from fresh clones, five at a time keep both cores busy (vmstat
    // 3 to 6 % idle) and ran the suite in 570 to 776 s of vitest against 831 to
    // 945 s at three, but with the CPU saturated a timing test failed in most
    // runs (0, 1, 0, 1 and 3 failures in five runs, each a different one: a
    // Python or JVM client starting late, a ZooKeeper session or dynalite
    // socket lost to a stall). Four were tried on 2026-11-29 and starved the
    // scripted scenarios the same way; again on 2026-11-30 without the library
    // tests: vitest 734 s against 833 s at three, 6 % idle, two timing failures. More files at once needs less CPU per
    // file first: a run's runner and workers (about 0.8 CPU-s for each of the
    // suite's 360 runs), vitest's fork per file (about 1 CPU-s each) and the
    // JVMs are most of it.
    pool: "forks",
    // Longest files first, on a fresh clone too (test/sequencer.ts says why).
    sequence: { sequencer: LongestFirst },
    maxWorkers: 3,
    minWorkers: 1,
    testTimeout: 120_000,
    hookTimeout: 60_000,
  },
});
