// Nemeses by name, and the schedule that drives them.
import { pauseNemesis } from "./pause.ts";
import { partitionNemesis } from "./partition.ts";
import { latencyNemesis } from "./latency.ts";
import { clockNemesis } from "./clock.ts";
import { killNemesis } from "./kill.ts";
import type { ClusterAbility } from "../cluster/cluster.ts";
import type { Nemesis } from "./nemesis.ts";

export type { Nemesis, NemesisContext, NemesisOptions } from "./nemesis.ts";
export { NemesisSchedule } from "./schedule.ts";
export { GRUDGES, grudge, type Grudge, type GrudgeKind } from "./grudges.ts";
export { CLOCK_MODES, type ClockMode } from "./clock.ts";

/** Each call makes a fresh nemesis: they keep the faults they have in force. */
export const NEMESES: Record<string, { describe: string; create(): Nemesis; needs?: ClusterAbility }> = {
  pause: { describe: "SIGSTOP worker processes past the lease", create: () => pauseNemesis("pause", (ctx) => ctx.workers, true) },
  "pause-server": { describe: "SIGSTOP lock servers", create: () => pauseNemesis("pause-server", (ctx) => ctx.servers) },
  partition: { describe: "cut worker-to-server links (Jepsen's grudges)", create: partitionNemesis },
  latency: { describe: "slow a random subset of links", create: latencyNemesis },
  clock: { describe: "bump or strobe a lock server's wall clock (libfaketime), then reset it", create: clockNemesis, needs: "clock" },
  kill: { describe: "SIGKILL a lock server, restart it after --restart-delay", create: killNemesis, needs: "kill" },
};
