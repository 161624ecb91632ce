// The adapter tests (`npm run test:adapters`): lock adapters as programs
// (docs/adapter-protocol.md) against real servers, the reference adapters in
// Python, Java and Go built from their lock files (ADAPTER_TESTS). Kept out of
// `npm test` for its time budget (vitest.config.ts says why); .ci/run runs them
// after it, with the suite's set-up, order and timeouts.
import { tierConfig } from "./vitest.config.ts";

export default tierConfig("adapters");
