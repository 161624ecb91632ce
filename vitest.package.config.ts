// The package tests (`npm run test:package`): fencecheck's types (the type check,
// and the API's TestOptions as published), and its `npm pack` tarball installed in
// a team's project outside the checkout, where a team's adapter, the docs' worked
// examples and the GitHub Action's commands run as written (test/package/team.ts).
// Kept out of `npm test` for its time budget (vitest.config.ts says why); .ci/run
// runs them after it.
import { tierConfig } from "./vitest.config.ts";

export default tierConfig("package");
