// Prometheus metrics of the lock operations a worker's clients make, counted from
// the very events LogicalClient records (fed every event it emits), so a scrape
// and the history can never disagree: an attempt is an acquire invoke, an outcome
// its completion, a latency the time between the two on the run's clock.
//
// Labels are few and bounded: the outcome, and the registry's default labels
// (backend, client, worker). Keys and owners are left out on purpose: a soak
// makes owners without end, and a time series per owner would swamp a Prometheus.
import { Counter, Histogram, type Registry } from "prom-client";
import type { UnindexedEvent } from "../store/events.ts";

const COMPLETIONS = ["ok", "fail", "info"] as const;
/** A release answered ok with {"released": false}: the lock was no longer the holder's, nothing was deleted. */
const NOT_OWNER = "not-owner";

// From a lock on loopback (a millisecond) to a waiter's whole --acquire-timeout or
// an unanswered command's timeout (seconds).
const ACQUIRE_BUCKETS_S = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
// From --work alone (100 ms by default) to a holder frozen for several leases.
const HOLD_BUCKETS_S = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/** A registry's metrics in prom-client's JSON form: what a worker sends the runner, and what AggregatorRegistry.aggregate takes. */
export type MetricsSnapshot = Awaited<ReturnType<Registry["getMetricsAsJSON"]>>;

const seconds = (fromNs: number, toNs: number): number => Math.max(0, toNs - fromNs) / 1e9;

export class OperationMetrics {
  private readonly attempts: Counter;
  private readonly acquires: Counter;
  private readonly acquireDuration: Histogram;
  private readonly holdDuration: Histogram;
  private readonly renews: Counter;
  private readonly releases: Counter;
  /** Per process, its outstanding invoke: a process has at most one. */
  private readonly open = new Map<number, UnindexedEvent>();
  /** Per process, when its current hold was granted (the acquire's ok). */
  private readonly heldSince = new Map<number, number>();

  /** Every metric goes into `registry`, whose default labels say whose clients these are. */
  constructor(registry: Registry) {
    const registers = [registry];
    this.attempts = new Counter({ name: "fencecheck_acquire_attempts_total", help: "Acquires invoked (each completes as one of fencecheck_acquires_total, or is still open).", registers });
    this.acquires = new Counter({
      name: "fencecheck_acquires_total",
      help: "Acquires completed, by outcome: ok (granted), fail (certainly not granted), info (unknown: timeout, connection lost).",
      labelNames: ["outcome"],
      registers,
    });
    this.acquireDuration = new Histogram({
      name: "fencecheck_acquire_duration_seconds",
      help: "Time from an acquire's invoke to its completion, by outcome.",
      labelNames: ["outcome"],
      buckets: ACQUIRE_BUCKETS_S,
      registers,
    });
    this.holdDuration = new Histogram({
      name: "fencecheck_hold_duration_seconds",
      help: "Time from an acquire's ok to the same hold's release invoke (holds abandoned to an unknown outcome are not counted).",
      buckets: HOLD_BUCKETS_S,
      registers,
    });
    this.renews = new Counter({ name: "fencecheck_renews_total", help: "Renews completed, by outcome: ok, fail (the lock was no longer ours), info (unknown).", labelNames: ["outcome"], registers });
    this.releases = new Counter({
      name: "fencecheck_releases_total",
      help: `Releases completed, by outcome: ok (released), ${NOT_OWNER} (answered {"released":false}: the lock was no longer ours), fail, info (unknown).`,
      labelNames: ["outcome"],
      registers,
    });
    // Every outcome present from the first scrape, so a rate() over it starts at 0, not at the first occurrence.
    for (const outcome of COMPLETIONS) {
      this.acquires.inc({ outcome }, 0);
      this.acquireDuration.zero({ outcome });
      this.renews.inc({ outcome }, 0);
      this.releases.inc({ outcome }, 0);
    }
    this.releases.inc({ outcome: NOT_OWNER }, 0);
    this.attempts.inc(0);
  }

  /** One event of the history, as LogicalClient emits it; nemesis events and other operations are ignored. */
  observe(e: UnindexedEvent): void {
    if (typeof e.process !== "number") return;
    if (e.type === "invoke") {
      this.open.set(e.process, e);
      if (e.f === "acquire") this.attempts.inc();
      if (e.f === "release") this.holdEnded(e.process, e.time);
      return;
    }
    const invoke = this.open.get(e.process);
    this.open.delete(e.process);
    if (e.f === "acquire") {
      this.acquires.inc({ outcome: e.type });
      if (invoke) this.acquireDuration.observe({ outcome: e.type }, seconds(invoke.time, e.time));
      if (e.type === "ok") this.heldSince.set(e.process, e.time);
    } else if (e.f === "renew") this.renews.inc({ outcome: e.type });
    else if (e.f === "release") this.releases.inc({ outcome: e.type === "ok" && e.value?.released === false ? NOT_OWNER : e.type });
    // A process whose outcome is unknown is retired and never releases: its hold is
    // left to its lease, and has no end to measure.
    if (e.type === "info") this.heldSince.delete(e.process);
  }

  private holdEnded(process: number, at: number): void {
    const since = this.heldSince.get(process);
    if (since === undefined) return;
    this.heldSince.delete(process);
    this.holdDuration.observe(seconds(since, at));
  }
}
