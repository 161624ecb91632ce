import { defineConfig } from "vitest/config";
import LongestFirst from "./test/sequencer.ts";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts", "backends/*/test/*.test.ts"],
    globalSetup: ["test/build-once.ts"],
    // Each file's temporary run directories removed when it is done (test/cleanup.ts).
    setupFiles: ["test/cleanup.ts"],
    // The runs a test starts in-process start their workers, resource and proxy
    // from dist/ (lib/paths.ts), as a user's run does: no TypeScript compiled at
    // each child's start, which on two cores was minutes of the suite.
    env: { FENCECHECK_ENTRIES: "dist" },
    // Integration tests start real servers and worker processes, and spend most of
    // their time waiting out a run's time limit. Five files at a time keep two
    // cores busy (measured 2026-11-30 from fresh clones: vmstat's idle 3 to 6 %
    // over the whole suite, 570 s of vitest with the docker tests, every timing
    // test passing; three at a time took 831 to 945 s). Four were tried on
    // 2026-11-29, before the scripted scenarios L2 and L3 ran again until their
    // script met the lock where it meant to (test/scenarios/run.ts
    // scenarioWhere), and starved them. A busy machine moves where a pause
    // lands, so a run's test asks only what every landing must show.
    pool: "forks",
    // Longest files first, on a fresh clone too (test/sequencer.ts says why).
    sequence: { sequencer: LongestFirst },
    maxWorkers: 5,
    minWorkers: 1,
    testTimeout: 120_000,
    hookTimeout: 60_000,
  },
});
