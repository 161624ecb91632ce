// bench:suite-cpu's vitest config: one of the project's configs
// (FENCECHECK_SUITE_CPU_CONFIG, vitest.config.ts by default) with one more setup
// file, the probe that notes which file each fork runs (bench/suite-cpu-probe.ts).
// Imported, not loaded by path: vitest bundles its config, and a path read at run
// time would reach node as TypeScript.
import { mergeConfig, type UserConfig } from "vitest/config";
import suite from "../vitest.config.ts";
import adapters from "../vitest.adapters.config.ts";
import docker from "../vitest.docker.config.ts";
import experiments from "../vitest.experiments.config.ts";
import libraries from "../vitest.libraries.config.ts";
import pkg from "../vitest.package.config.ts";

export const CONFIGS: Record<string, UserConfig> = {
  "vitest.config.ts": suite,
  "vitest.adapters.config.ts": adapters,
  "vitest.docker.config.ts": docker,
  "vitest.experiments.config.ts": experiments,
  "vitest.libraries.config.ts": libraries,
  "vitest.package.config.ts": pkg,
};

const chosen = CONFIGS[process.env.FENCECHECK_SUITE_CPU_CONFIG ?? "vitest.config.ts"];
if (!chosen) throw new Error(`FENCECHECK_SUITE_CPU_CONFIG: not one of ${Object.keys(CONFIGS).join(", ")}`);

export default mergeConfig(chosen, { test: { setupFiles: [new URL("./suite-cpu-probe.ts", import.meta.url).pathname] } });
