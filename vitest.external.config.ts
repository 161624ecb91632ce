// The external tests (`npm run test:external`): whole runs with --deploy external
// against clusters started apart from the run (EXTERNAL_TESTS). Kept out of `npm
// test` for its time budget (vitest.config.ts says why); .ci/run runs them after it.
import { tierConfig } from "./vitest.config.ts";

export default tierConfig("external");
