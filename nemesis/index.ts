// Nemeses by name, and the schedule that drives them.
import { pauseNemesis } from "./pause.ts";
import type { Nemesis } from "./nemesis.ts";

export type { Nemesis, NemesisContext, NemesisOptions } from "./nemesis.ts";
export { NemesisSchedule } from "./schedule.ts";

/** Each call makes a fresh nemesis: they keep the faults they have in force. */
export const NEMESES: Record<string, { describe: string; create(): Nemesis }> = {
  pause: { describe: "SIGSTOP worker processes past the lease", create: () => pauseNemesis("pause", (ctx) => ctx.workers) },
  "pause-server": { describe: "SIGSTOP lock servers", create: () => pauseNemesis("pause-server", (ctx) => ctx.servers) },
};
