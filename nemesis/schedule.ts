// Jepsen's nemesis generator in small: every interval, one fault from one of the
// chosen nemeses; at the time limit, no more faults and a heal of everything.
import type { Nemesis, NemesisContext } from "./nemesis.ts";
import { sleep } from "../lib/index.ts";

/** What the runner drives: the random schedule below, or a script (script.ts). */
export interface Schedule {
  /** Whatever must be in force before the clients start. */
  prepare(): Promise<void>;
  /** The clients start at `startAt` (run clock, ns). */
  start(startAt: number): void;
  /** No more faults; heal every one still in force. */
  healAll(): Promise<void>;
  active(): string[];
}

export class NemesisSchedule implements Schedule {
  private stopped = false;
  private loop: Promise<void> = Promise.resolve();
  /** The fault being injected now: the heal waits for it, or a kill finishing after the heal would stay unhealed. */
  private current: Promise<void> = Promise.resolve();

  constructor(
    private readonly nemeses: Nemesis[],
    private readonly ctx: NemesisContext,
    private readonly warn: (line: string) => void = (l) => process.stderr.write(l + "\n"),
  ) {}

  async prepare(): Promise<void> {}

  start(): void {
    if (this.nemeses.length === 0) return;
    // The same context, able to tell a nemesis still choosing that the time limit has come.
    const ctx: NemesisContext = Object.create(this.ctx, { stopping: { value: () => this.stopped } });
    this.loop = (async () => {
      const intervalMs = this.ctx.options.intervalS * 1000;
      for (;;) {
        // Jitter the gap so faults do not fall in step with the clients' schedule.
        await sleep(this.ctx.rng.between(0.5, 1.5) * intervalMs);
        if (this.stopped) return;
        const nemesis = this.ctx.rng.pick(this.nemeses);
        // A fault that could not be injected is reported, and the run goes on.
        this.current = nemesis.inject(ctx).catch((err) => this.warn(`${nemesis.name}: could not inject a fault: ${err?.message ?? err}`));
        await this.current;
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
