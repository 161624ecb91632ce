// The library tests (`npm run test:libraries`): whole runs of one library each
// (*.library.test.ts), with the suite's set-up, order and timeouts
// (vitest.config.ts). The libraries preset's soak (docs/locks.md) runs every
// library under every fault; these check what each library's runs must show.
import { tierConfig } from "./vitest.config.ts";

export default tierConfig("libraries");
