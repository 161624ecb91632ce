import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/build-once.ts"],
    // Integration tests start real servers and worker processes; two files at a
    // time is what a 2-core machine takes without starving their clocks.
    pool: "forks",
    maxWorkers: 2,
    minWorkers: 1,
    testTimeout: 120_000,
    hookTimeout: 60_000,
  },
});
