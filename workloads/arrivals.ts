// When a logical client makes its next attempt: an open (Poisson) model, as
// Jepsen's stagger. Attempts follow their own timeline while the client keeps up,
// so a slow lock service does not slow the offered load. A client held up past its
// next attempt (a partition, a pause, or just a long hold) makes one attempt at
// once and goes on from there: it has at most one operation in flight, so the
// attempts it missed would otherwise all fire back to back, a burst no real
// client makes.
import type { Rng } from "../lib/random.ts";

export class Arrivals {
  private next: number;
  private first = true;

  /** Times in ns on the run's clock; `rate` is attempts per second. */
  constructor(start: number, private readonly rate: number, private readonly rng: Rng) {
    this.next = start;
  }

  /** The time of the next attempt, given the time now. */
  after(now: number): number {
    // Late for the next attempt: one now, and the timeline goes on from here.
    if (!this.first) this.next = Math.max(this.next + this.rng.exp(1000 / this.rate) * 1e6, now);
    this.first = false;
    return this.next;
  }
}
