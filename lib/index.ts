// Small generic helpers shared by every part: seeded randomness, time, the exit
// codes and the bad-input error, the option parser every command reads its
// arguments with, and running services of our own (the resource, the fault proxy)
// as child processes together with the lifeline by which such a child follows its
// parent out.
export { rng, shuffled, type Rng } from "./random.ts";
export { sleep, nsToMs } from "./time.ts";
export { EXIT, BadInput, exitCodeFor } from "./exit.ts";
export { parseArgs, commandOptions, noPositional, helpText, isChoice, type OptionSpec, type OptionKind, type OptionValue, type ParsedOptions, type OptionsOf, type OptionValueOf } from "./args.ts";
export { spawnService, type ServiceHandle, type ServiceOptions } from "./service.ts";
export { BUILT, ROOT, repoFile, entryFile, entryArgs, nodeArgsFor, tsxUrl } from "./paths.ts";
export { namesTypeScript, rerunWithTypeScript } from "./typescript.ts";
export { onParentGone } from "./lifeline.ts";
export { parseHostPort } from "./address.ts";
export { nearest, didYouMean, editDistance } from "./nearest.ts";
export { startWorker } from "./worker.ts";
export { countedTotal, lazyRegistry, type Scraped } from "./scrape.ts";
export { firstLine } from "./first-line.ts";
