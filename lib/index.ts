// Small generic helpers shared by every part: seeded randomness and time.
export { rng, type Rng } from "./random.ts";
export { sleep, nsToMs } from "./time.ts";
