// The docker tests (`npm run test:docker`): whole runs with --deploy docker on a
// real container engine (DOCKER_TESTS). Kept out of `npm test` for its time
// budget (vitest.config.ts says why); .ci/run runs them after it, with the
// suite's set-up, order and timeouts.
import { tierConfig } from "./vitest.config.ts";

export default tierConfig("docker");
