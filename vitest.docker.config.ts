// The docker tests (`npm run test:docker`): whole runs with --deploy docker on a
// real container engine (DOCKER_TESTS). Kept out of `npm test` for its time
// budget (vitest.config.ts says why); .ci/run runs them after it, with the
// suite's set-up, order and timeouts.
import { defineConfig } from "vitest/config";
import suite, { DOCKER_TESTS } from "./vitest.config.ts";

export default defineConfig({
  ...suite,
  test: { ...suite.test, include: DOCKER_TESTS, exclude: ["**/node_modules/**"] },
});
