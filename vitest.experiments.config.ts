// The experiment tests (`npm run test:experiments`): each of the lab's
// experiments run whole with --quick and stored (EXPERIMENT_TESTS). Kept out of
// `npm test` for its time budget (vitest.config.ts says why); .ci/run runs them
// after it, with the suite's set-up, order and timeouts.
import { tierConfig } from "./vitest.config.ts";

export default tierConfig("experiments");
