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
    // their time waiting out a run's time limit. Since the children start as
    // built JavaScript (no TypeScript compiled in each), three files at a time fit
    // a 2-core machine without starving their clocks (measured 2026-11-26: the
    // whole suite in 450 s with three against 632 s with two, every timing test
    // passing, with a benchmark running beside it). Four were tried on 2026-11-29
    // (a file's processes use about 0.3 CPU-seconds per second of its wall time on
    // average), but the longest files start together, and four of them at once
    // (npm installs, JVMs, the type check) starved the scripted scenarios' timing
    // on a quiet machine: L2, L3 and a JVM adapter's first grants failed.
    pool: "forks",
    // Longest files first, on a fresh clone too (test/sequencer.ts says why).
    sequence: { sequencer: LongestFirst },
    maxWorkers: 3,
    minWorkers: 1,
    testTimeout: 120_000,
    hookTimeout: 60_000,
  },
});
