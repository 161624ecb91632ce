import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/build-once.ts"],
    // The runs a test starts in-process start their workers, resource and proxy
    // from dist/ (lib/paths.ts), as a user's run does: no TypeScript compiled at
    // each child's start, which on two cores was minutes of the suite.
    env: { FENCECHECK_ENTRIES: "dist" },
    // Integration tests start real servers and worker processes; two files at a
    // time is what a 2-core machine takes without starving their clocks.
    pool: "forks",
    maxWorkers: 2,
    minWorkers: 1,
    testTimeout: 120_000,
    hookTimeout: 60_000,
  },
});
