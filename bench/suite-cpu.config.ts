// bench:suite-cpu's vitest config: one of the project's configs
// (FENCECHECK_SUITE_CPU_CONFIG, vitest.config.ts by default) with one more setup
// file, the probe that notes which file each fork runs (bench/suite-cpu-probe.ts).
// Imported, not loaded by path: vitest bundles its config, and a path read at run
// time would reach node as TypeScript.
import { mergeConfig, type UserConfig } from "vitest/config";
import suite, { TIERS, tierConfig, type Tier } from "../vitest.config.ts";

/** npm test's config and each tier's, by the file name `npm run test:NAME` gives vitest. */
export const CONFIGS: Record<string, UserConfig> = {
  "vitest.config.ts": suite,
  ...Object.fromEntries((Object.keys(TIERS) as Tier[]).map((t) => [`vitest.${t}.config.ts`, tierConfig(t)])),
};

const chosen = CONFIGS[process.env.FENCECHECK_SUITE_CPU_CONFIG ?? "vitest.config.ts"];
if (!chosen) throw new Error(`FENCECHECK_SUITE_CPU_CONFIG: not one of ${Object.keys(CONFIGS).join(", ")}`);

export default mergeConfig(chosen, { test: { setupFiles: [new URL("./suite-cpu-probe.ts", import.meta.url).pathname] } });
