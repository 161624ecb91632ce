// Jepsen's nemesis generator in small: every interval, one fault from one of the
// chosen nemeses; at the time limit, no more faults and a heal of everything.
import type { Nemesis, NemesisContext } from "./nemesis.ts";
import { shuffled, sleep, type Rng } from "../lib/index.ts";

/**
 * The first gap, as a share of the interval. A full interval before the first
 * fault spent a tenth to a third of a 10 s run with nothing to find: the clients
 * hold their first locks within milliseconds of time zero, and a fault aimed at
 * holders waits for one anyway (aim.ts).
 */
export const FIRST_GAP = [0.1, 0.5] as const;
/** Every later gap: the interval, jittered by half either way. */
const GAP = [0.5, 1.5] as const;

/**
 * The order faults are drawn in: each round takes every nemesis once, in a random
 * order. Drawn independently, a 10 s run of partition,pause (about five faults)
 * got one pause or none in a third of runs, and a configuration whose stale holder
 * comes of a pause missed for want of pauses; in rounds each kind gets its share
 * and the order stays random.
 */
export function nemesisRounds(rng: Rng, nemeses: readonly Nemesis[]): () => Nemesis {
  let round: Nemesis[] = [];
  return () => {
    if (round.length === 0) round = nemeses.length === 1 ? [nemeses[0]] : shuffled(rng, nemeses);
    return round.shift()!;
  };
}

/** What the runner drives: the random schedule below, or a script (script.ts). */
export interface Schedule {
  /** Whatever must be in force before the clients start. */
  prepare(): Promise<void>;
  /** The clients start at `startAt` and the final heal comes at `endAt` (run clock, ns). */
  start(startAt: number, endAt: number): void;
  /** No more faults; heal every one still in force. */
  healAll(): Promise<void>;
  active(): string[];
}

export class NemesisSchedule implements Schedule {
  private stopped = false;
  private loop: Promise<void> = Promise.resolve();
  /** The fault being injected now: the heal waits for it, or a kill finishing after the heal would stay unhealed. */
  private current: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly nemeses: Nemesis[],
    private readonly ctx: NemesisContext,
    /** The run's clock, in ns (for the time left before the final heal). */
    private readonly clock: () => number,
    private readonly warn: (line: string) => void = (l) => process.stderr.write(l + "\n"),
  ) {}

  async prepare(): Promise<void> {}

  /** The first fault is timed from now, a little before `_startAt`; `endAt` Infinity: no fault is ever too late. */
  start(_startAt: number, endAt: number): void {
    if (this.nemeses.length === 0) return;
    // The same context, able to tell a nemesis still choosing that the time limit
    // has come, how long is left before the final heal, and when the others' faults end.
    const others = (self: string) => Math.max(0, ...this.nemeses.filter((n) => n.name !== self).map((n) => n.endsAt?.() ?? 0));
    const ctx: NemesisContext = Object.create(this.ctx, {
      stopping: { value: () => this.stopped },
      othersEndAt: { value: others },
      remainingMs: { value: () => (endAt - this.clock()) / 1e6 },
    });
    this.loop = (async () => {
      const intervalMs = this.ctx.options.intervalS * 1000;
      const next = nemesisRounds(this.ctx.rng, this.nemeses);
      for (let first = true; ; first = false) {
        // Jitter the gap so faults do not fall in step with the clients' schedule.
        const [low, high] = first ? FIRST_GAP : GAP;
        await sleep(this.ctx.rng.between(low, high) * intervalMs);
        if (this.stopped) return;
        // A nemesis with nothing to do (its fault still in force, every target
        // already under one) passes its turn to the next of the round, at once:
        // a skipped turn used to cost a whole gap.
        // Each nemesis is tried once a turn: a round may end on the one that just passed and the next begin with it.
        for (const tried = new Set<Nemesis>(); tried.size < this.nemeses.length && !this.stopped; ) {
          const nemesis = next();
          if (tried.has(nemesis)) continue;
          tried.add(nemesis);
          // A fault that could not be injected is reported, and the run goes on (the turn passes).
          const injecting = nemesis.inject(ctx).catch((err) => (this.warn(`${nemesis.name}: could not inject a fault: ${err?.message ?? err}`), false));
          this.current = injecting;
          if (await injecting) break;
        }
      }
    })();
  }

  /**
   * Stop injecting, let a fault under way finish, and heal every fault still in
   * force. Without the wait, a kill whose SIGKILL was still going out when the
   * time limit came registered its server as down after the heal had looked, so
   * nothing restarted it before the teardown (seen in docker mode: a `kill` with
   * no `restart` in the history).
   */
  async healAll(): Promise<void> {
    this.stopped = true;
    await this.current;
    for (const n of this.nemeses) await n.heal(this.ctx).catch((err) => this.warn(`${n.name}: heal failed: ${err?.message ?? err}`));
  }

  active(): string[] {
    return this.nemeses.flatMap((n) => n.active());
  }
}
