// Nemeses by name, and the schedules that drive them: random, or a script.
import { pauseNemesis } from "./pause.ts";
import { partitionNemesis } from "./partition.ts";
import { latencyNemesis } from "./latency.ts";
import { clockNemesis, clockAims } from "./clock.ts";
import { killNemesis } from "./kill.ts";
import type { ClusterAbility } from "../cluster/cluster.ts";
import type { NemesisKind } from "./nemesis.ts";

export type { Nemesis, NemesisContext, NemesisOptions, NemesisKind, Fault } from "./nemesis.ts";
export { NemesisSchedule, type Schedule } from "./schedule.ts";
export { ScriptSchedule, scriptNemeses, type ScriptStep } from "./script.ts";
export { GRUDGES, WHOLE_SERVER, grudge, type Grudge, type GrudgeKind } from "./grudges.ts";
export { CLOCK_MODES, CLOCK_TARGETS } from "./clock.ts";
export type { ClockMode, ClockTarget, Aim, HeldLock } from "./nemesis.ts";
export { AIMS } from "./aim.ts";

/** Each call makes a fresh nemesis: they keep the faults they have in force. `aims` says what a fault's targets name. */
export const NEMESES = {
  pause: { describe: "SIGSTOP worker processes past the lease", aims: "workers", create: () => pauseNemesis("pause", "workers", (ctx) => ctx.workers, true) },
  "pause-server": { describe: "SIGSTOP lock servers", aims: "servers", create: () => pauseNemesis("pause-server", "servers", (ctx) => ctx.servers) },
  partition: { describe: "cut worker-to-server links (Jepsen's grudges)", aims: "links", create: partitionNemesis, cutsMembers: true },
  latency: { describe: "slow a random subset of links", aims: "links", create: latencyNemesis },
  clock: {
    describe: "bump or strobe a lock server's wall clock, or with --clock-target clients a worker's (libfaketime), then reset it",
    aims: "servers",
    aimsAt: clockAims,
    create: clockNemesis,
    needs: "clock",
  },
  kill: { describe: "SIGKILL a lock server, restart it after --restart-delay", aims: "servers", create: killNemesis, needs: "kill" },
} as const satisfies Record<string, NemesisKind>;

export type NemesisName = keyof typeof NEMESES;
/** The nemesis of that name, if there is one. */
export const nemesisNamed = (name: string): NemesisKind | undefined => (Object.hasOwn(NEMESES, name) ? (NEMESES as Record<string, NemesisKind>)[name] : undefined);
