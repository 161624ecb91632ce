// The options of `fencecheck test` as the API takes them, by their camelCase
// names (timeLimit is --time-limit). The type is inferred from the options'
// declarations (runner/options.ts, and each backend's own in backends/NAME/), so
// that changing an option's kind or choices changes it, and a program that uses
// an option wrongly fails to compile (test/typecheck.test.ts). The package's
// published declaration of this file is written by the build from the same
// declarations, each option's help as its comment (scripts/api-types.mjs); the
// table itself is exported for that.
export type { TestOptions } from "../runner/options.ts";
export { TEST_OPTIONS } from "../runner/options.ts";
