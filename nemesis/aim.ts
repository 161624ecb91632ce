// Aiming: where a fault lands so that it can matter. A fault on a worker that
// holds nothing, or on a server that granted nothing, proves nothing; Jepsen aims
// at primaries for the same reason. With --aim holder (the default) each nemesis
// picks its target from the locks held right now (ctx.holds(), from the history
// so far); with --aim random, or when nothing is held, anywhere. Either way the
// start event's value says why (`aim`, and the hold it aimed at), so the report
// can tell a chosen fault from a chance one.
import { shuffled, sleep, type Rng } from "../lib/index.ts";
import type { Aim, HeldLock, NemesisContext } from "./nemesis.ts";

export const AIMS: readonly Aim[] = ["holder", "random"];

/** What a start event records of its aim: `aim`, and for a hold the worker and the servers that granted it. */
export type AimValue = Record<string, unknown>;

/**
 * Workers with a client holding a lock, when faults aim at holders; none
 * otherwise. Those whose write is still to come first (HeldLock.writeDue): a
 * fault on a hold that has written delays only its release.
 */
export function aimedWorkers(ctx: Pick<NemesisContext, "options" | "holds">): string[] {
  const due = holdersOf(ctx, true);
  return due.length ? due : holdersOf(ctx, false);
}

/** Workers holding a lock when faults aim at holders (only those whose write is still to come, with `dueOnly`); none otherwise. */
function holdersOf(ctx: Pick<NemesisContext, "options" | "holds">, dueOnly: boolean): string[] {
  if (ctx.options.aim !== "holder") return [];
  return [...new Set(ctx.holds().filter((h) => !dueOnly || h.writeDue !== false).map((h) => h.worker))];
}

/**
 * The value for a fault on these workers: at a holder when one of them is among
 * `holders` (aimedWorkers); otherwise at random, saying how many holders there
 * were when it was meant to aim (none, or all of them already under a fault).
 */
export function workerAim(aim: Aim, targets: readonly string[], holders: readonly string[]): AimValue {
  const held = targets.find((w) => holders.includes(w));
  if (held !== undefined) return { aim: "holder", holder: held };
  return aim === "holder" ? { aim: "random", held: holders.length } : { aim: "random" };
}

/**
 * The worker for a fault on one worker (pause, a client clock jump), among
 * `candidates` (those not already under a fault of this nemesis): one whose
 * client holds a lock now when aiming at holders and there is one, else any.
 */
export function aimWorker(ctx: Pick<NemesisContext, "rng" | "options" | "holds">, candidates: readonly string[]): { target: string; aim: AimValue } {
  const holders = aimedWorkers(ctx);
  const held = candidates.filter((t) => holders.includes(t));
  const target = ctx.rng.pick(held.length ? held : candidates);
  return { target, aim: workerAim(ctx.options.aim, [target], holders) };
}

export interface ServerAim {
  targets: string[];
  aim: AimValue;
}

/**
 * Servers for a fault on servers (kill, clock, pause-server), among `candidates`
 * (those not already under a fault of this nemesis): a node that granted a hold
 * now, or for a hold granted by the whole service (a single Redis, etcd) any
 * server while it is held. `breakMajority`: take as many of the hold's granting
 * nodes as it takes to leave it short of a majority (one, where it was granted by
 * a bare majority): a clock that jumps forward on one node of a hold granted by
 * all five frees the key there alone, and no second client can win three (K3
 * needs the others' keys gone too). Null when there is nothing to hit.
 */
export function aimServers(
  rng: Rng,
  aim: Aim,
  holds: readonly HeldLock[],
  servers: readonly string[],
  candidates: readonly string[],
  breakMajority = false,
): ServerAim | null {
  if (candidates.length === 0) return null;
  if (aim === "holder") {
    const within = (h: HeldLock) => (h.granted ?? servers).filter((s) => candidates.includes(s));
    const aimed = holds.filter((h) => within(h).length > 0);
    if (aimed.length) {
      const hold = rng.pick(aimed);
      const granted = within(hold);
      const quorum = Math.floor(servers.length / 2) + 1;
      const grantedBy = hold.granted ?? servers;
      const count = breakMajority && hold.granted ? Math.min(granted.length, Math.max(1, grantedBy.length - quorum + 1)) : 1;
      const value: AimValue = { aim: "holder", holder: hold.worker };
      if (hold.granted) value.granted = hold.granted;
      return { targets: shuffled(rng, granted).slice(0, count), aim: value };
    }
  }
  const value: AimValue = { aim: "random" };
  if (aim === "holder") value.held = holds.length;
  return { targets: [rng.pick(candidates)], aim: value };
}

/** How often, and at most how long (a share of the interval), a fault aimed at holders waits for one. */
const HOLDER_POLL_MS = 10;
const HOLDER_WAIT_SHARE = 0.5;

/**
 * Too late for a fault of this nemesis to matter: it could not last a lease
 * before the final heal, so no lease runs out under it and no second holder
 * gets in (a pause started 300 ms before the heal is cut short at 300 ms).
 */
export const tooLate = (ctx: Pick<NemesisContext, "options" | "remainingMs" | "stopping">): boolean =>
  ctx.stopping?.() === true || (ctx.remainingMs !== undefined && ctx.remainingMs() < ctx.options.leaseMs);

/**
 * Aiming at holders: wait until the other nemeses' faults in force have ended,
 * never until too late. For a partition: laid over a frozen holder, it cuts the
 * other workers off part of the lock service too, and a Redlock client that
 * waits for every node's reply, or a worker left on the minority side, then
 * takes nothing, so the frozen holder's lease runs out with nobody to take it
 * and it wakes to write unopposed. (Ten-second node-redlock-4 runs of
 * partition,pause found their stale write in 3 of 7 runs when partitions came
 * 0.7 s into each pause, against 18 of 20 with the faults further apart.)
 */
export async function othersOver(ctx: Pick<NemesisContext, "options" | "remainingMs" | "stopping" | "othersEndAt">, self: string): Promise<void> {
  if (ctx.options.aim !== "holder" || !ctx.othersEndAt) return;
  while (ctx.othersEndAt(self) > Date.now() && !tooLate(ctx)) await sleep(HOLDER_POLL_MS);
}

/**
 * Aiming at holders when none is right for it now: wait a little for a hold
 * whose write is still to come (a fault on it delays the write past the lease),
 * taking any hold at the end, rather than freeze or slow a worker that holds
 * nothing. Short holds on a lock that stands free most of the time (etcd under
 * partitions) otherwise send most pauses and latency faults at random, and a run
 * can end with no stale holder for fencing to refuse (or, unfenced, nothing to
 * find). Bounded by half the interval, so the faults keep their pace, except
 * while another nemesis's fault is in force and nobody holds at all (a partition
 * that cut every worker off the lock service, a killed server): such a fault is
 * waited out, as a pause that lands in it freezes a worker that holds nothing
 * (11 of the 26 ten-second partition,pause runs that missed their stale write,
 * in a 240-run measurement on 2026-11-30, had a pause land so). Never past the
 * point where the fault would be too late (tooLate).
 */
export async function holderAmong(
  ctx: Pick<NemesisContext, "options" | "holds" | "remainingMs" | "stopping" | "othersEndAt">,
  candidates: readonly string[],
  self = "",
): Promise<void> {
  if (ctx.options.aim !== "holder") return;
  const share = Math.min(2000, ctx.options.intervalS * 1000 * HOLDER_WAIT_SHARE);
  let until = Date.now() + share;
  for (;;) {
    if (holdersOf(ctx, true).some((w) => candidates.includes(w)) || tooLate(ctx)) return;
    const anyHolder = holdersOf(ctx, false).some((w) => candidates.includes(w));
    if (!anyHolder) {
      const others = ctx.othersEndAt?.(self) ?? 0;
      // Waited out up to its end, then the usual share for a hold to start.
      const heal = ctx.remainingMs ? Date.now() + ctx.remainingMs() : Infinity;
      if (others > Date.now()) until = Math.max(until, Math.min(others, heal) + share);
    }
    if (Date.now() >= until) return;
    await sleep(HOLDER_POLL_MS);
  }
}
