// The overview of a large run: run time cut into equal buckets, and per bucket how
// many operations of each `f` ended ok, failed, failed on a stale fence or stayed
// unknown, and a log histogram of acquire latencies. Memory is fixed whatever the
// length of the run: when the buckets run out, neighbours merge and the width doubles
// (the way Jepsen's plots bin a long history).
export const MAX_BUCKETS = 1024;
const INITIAL_WIDTH = 10_000_000;
export const OP_ROWS = ["acquire", "renew", "write", "read", "release", "other"] as const;
export const OUTCOMES = ["ok", "fail", "stale", "info"] as const;
const CELLS = OP_ROWS.length * OUTCOMES.length;
/** Latency bins: 20 per decade from 1 µs to 10^7 ms, so a quantile is off by at most 6 %. */
const PER_DECADE = 20, FLOOR_LOG = -3, BINS = 10 * PER_DECADE;

export const rowOf = (f: string): number => {
  const i = (OP_ROWS as readonly string[]).indexOf(f);
  return i < 0 ? OP_ROWS.length - 1 : i;
};

export interface Quantiles { p50: number; p99: number; max: number; n: number }

export class Buckets {
  /** Bucket i spans [origin + i·width, origin + (i+1)·width). */
  width: number;
  used = 0;
  private readonly counts = new Float64Array(MAX_BUCKETS * CELLS);
  private readonly events = new Float64Array(MAX_BUCKETS);
  private readonly hist = new Uint32Array(MAX_BUCKETS * BINS);
  private readonly maxMs = new Float64Array(MAX_BUCKETS);

  constructor(readonly origin: number, width = INITIAL_WIDTH) {
    this.width = width;
  }

  /**
   * Buckets that take every time from `origin` to `last` without merging: the width
   * merging would come to (the same buckets as counting from the start, since a
   * merged bucket holds exactly what one of twice the width would).
   */
  static spanning(origin: number, last: number): Buckets {
    let width = INITIAL_WIDTH;
    while (Math.floor((last - origin) / width) >= MAX_BUCKETS) width *= 2;
    return new Buckets(origin, width);
  }

  private at(t: number): number {
    let i = Math.floor((t - this.origin) / this.width);
    if (i < 0) i = 0;
    while (i >= MAX_BUCKETS) {
      this.coarsen();
      i = Math.floor((t - this.origin) / this.width);
    }
    if (i >= this.used) this.used = i + 1;
    return i;
  }

  /** Halves the number of buckets in use by merging neighbours. */
  private coarsen(): void {
    for (let i = 0; i < MAX_BUCKETS; i++) {
      const to = i >> 1, even = (i & 1) === 0;
      for (let c = 0; c < CELLS; c++) {
        const v = this.counts[i * CELLS + c];
        this.counts[to * CELLS + c] = even ? v : this.counts[to * CELLS + c] + v;
      }
      this.events[to] = even ? this.events[i] : this.events[to] + this.events[i];
      for (let b = 0; b < BINS; b++) {
        const v = this.hist[i * BINS + b];
        this.hist[to * BINS + b] = even ? v : this.hist[to * BINS + b] + v;
      }
      this.maxMs[to] = even ? this.maxMs[i] : Math.max(this.maxMs[to], this.maxMs[i]);
    }
    this.counts.fill(0, (MAX_BUCKETS / 2) * CELLS);
    this.events.fill(0, MAX_BUCKETS / 2);
    this.hist.fill(0, (MAX_BUCKETS / 2) * BINS);
    this.maxMs.fill(0, MAX_BUCKETS / 2);
    this.width *= 2;
    this.used = Math.ceil(this.used / 2);
  }

  event(t: number): void {
    this.events[this.at(t)]++;
  }

  /** An operation invoked at `invoked` that ended with `outcome` (index into OUTCOMES) after `ms`. */
  op(invoked: number, row: number, outcome: number, ms: number, isAcquire: boolean): void {
    this.opIn(this.at(invoked), row, outcome, ms, isAcquire);
  }

  /**
   * event(invoked), event(done) and op(invoked, ...) at once, for an operation that
   * completed at `done` (never before `invoked`): its buckets found once each.
   */
  completed(invoked: number, done: number, row: number, outcome: number, isAcquire: boolean): void {
    // The later time first: should it merge buckets, the earlier one's is found after.
    const j = this.at(done);
    const i = this.at(invoked);
    this.events[i]++;
    this.events[j]++;
    this.opIn(i, row, outcome, (done - invoked) / 1e6, isAcquire);
  }

  private opIn(i: number, row: number, outcome: number, ms: number, isAcquire: boolean): void {
    this.counts[i * CELLS + row * OUTCOMES.length + outcome]++;
    if (!isAcquire) return;
    const bin = ms <= 0 ? 0 : Math.min(BINS - 1, Math.max(0, Math.floor((Math.log10(ms) - FLOOR_LOG) * PER_DECADE)));
    this.hist[i * BINS + bin]++;
    if (ms > this.maxMs[i]) this.maxMs[i] = ms;
  }

  count(i: number, row: number, outcome: number): number {
    return this.counts[i * CELLS + row * OUTCOMES.length + outcome];
  }

  /** Roughly how many events fall in [from, to]: whole buckets pro rata. */
  eventsIn(from: number, to: number): number {
    let n = 0;
    const a = Math.max(0, Math.floor((from - this.origin) / this.width));
    const b = Math.min(this.used - 1, Math.floor((to - this.origin) / this.width));
    for (let i = a; i <= b; i++) {
      const lo = Math.max(from, this.origin + i * this.width), hi = Math.min(to, this.origin + (i + 1) * this.width);
      n += this.events[i] * Math.max(0, hi - lo) / this.width;
    }
    return n;
  }

  /** Acquire latency quantiles of bucket i (bin midpoints; max exact), or null when it had none. */
  quantiles(i: number): Quantiles | null {
    let n = 0;
    for (let b = 0; b < BINS; b++) n += this.hist[i * BINS + b];
    if (n === 0) return null;
    const at = (q: number): number => {
      const rank = Math.ceil(q * n);
      let seen = 0;
      for (let b = 0; b < BINS; b++) {
        seen += this.hist[i * BINS + b];
        if (seen >= rank) return Math.min(this.maxMs[i], 10 ** ((b + 0.5) / PER_DECADE + FLOOR_LOG));
      }
      return this.maxMs[i];
    };
    return { p50: at(0.5), p99: at(0.99), max: this.maxMs[i], n };
  }
}
