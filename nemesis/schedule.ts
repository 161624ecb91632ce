// Jepsen's nemesis generator in small: every interval, one fault from one of the
// chosen nemeses; at the time limit, no more faults and a heal of everything.
import type { Nemesis, NemesisContext } from "./nemesis.ts";
import { sleep } from "../lib/index.ts";

export class NemesisSchedule {
  private stopped = false;
  private loop: Promise<void> = Promise.resolve();

  constructor(private readonly nemeses: Nemesis[], private readonly ctx: NemesisContext) {}

  start(): void {
    if (this.nemeses.length === 0) return;
    this.loop = (async () => {
      const intervalMs = this.ctx.options.intervalS * 1000;
      for (;;) {
        // Jitter the gap so faults do not fall in step with the clients' schedule.
        await sleep(this.ctx.rng.between(0.5, 1.5) * intervalMs);
        if (this.stopped) return;
        await this.ctx.rng.pick(this.nemeses).inject(this.ctx);
      }
    })();
  }

  /** Stop injecting and heal every fault still in force. */
  async healAll(): Promise<void> {
    this.stopped = true;
    for (const n of this.nemeses) await n.heal(this.ctx);
  }

  active(): string[] {
    return this.nemeses.flatMap((n) => n.active());
  }
}
