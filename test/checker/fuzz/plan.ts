// The random choices one fuzz case is made of, as fast-check arbitraries. A case is
// a Plan: what kind of run it is (format, lock kind, workload, resource, what the
// run's clients report), which defects the lock service, the client library and the
// resource have, and a list of steps, each a few small numbers that say which client
// moves, how much time passes and what it does. execute.ts turns a Plan into a
// history and a resource log; it is a pure function of the Plan, so a failing case
// is replayed from its Plan alone.
//
// Why steps of small numbers rather than a list of operations: the interpreter reads
// each step in the state the earlier steps left (a client that holds writes or
// releases, one that waits for an acquire completes it), so whatever fast-check
// removes or shrinks while it looks for a smaller failing case, the rest is still a
// well-formed history. Every field shrinks toward the plainest run: format 1, a
// mutex, one counter of fences, fencing on, no defects, short waits.
import fc from "fast-check";

/** What can be wrong with the lock service, the client library or the resource. Each is a known failure of real ones. */
export const DEFECTS = [
  // The lock service grants a key that is held (a mutex twice, an rw writer beside readers, a semaphore past its permits).
  "double-grant",
  // A renew that re-takes the lock without checking its owner (a blind SET PX): ok after the lease ran out and another hold was granted.
  "blind-renew",
  // A release that deletes the lock whoever holds it (GET, then DEL).
  "unsafe-release",
  // A reentrant lock whose inner release frees the outer hold.
  "inner-release-frees",
  // A reentrant lock that grants a re-entry (depth 2) to a process that does not hold depth 1, or to nobody's hold at all.
  "reentry-other",
  // A re-entry's fence that breaks what the header's fence_on_reentry promises.
  "reentry-fence",
  // The one counter of fences repeats a fence, goes back, or starts again.
  "fence-glitch",
  // The client hands over a lease its own count says is spent (validity_ms <= 0).
  "expired-on-arrival",
  // An acquire fails behind a lock node of its own session (ZooKeeper).
  "orphan-node",
  // A withdrawn waiter's entry is left in the queue: later waiters wait behind it, or it is granted.
  "cancel-leak",
  // The resource accepts a write its rule refuses.
  "stale-accept",
  // The resource refuses a write its rule accepts.
  "false-reject",
  // The resource (its memory) restarts: it forgets the fences and numbers its decisions from 1 again.
  "resource-restart",
  // The resource's log loses a decision.
  "log-drops-line",
  // A committed decision's line says accepted: null for a write whose client was told ok.
  "ok-but-null",
  // A counter writer writes something that is not a number.
  "counter-garbage",
  // The client names a new hold with an owner it gave an earlier hold of the key (its counter started again).
  "owner-reuse",
] as const;
export type Defect = (typeof DEFECTS)[number];

export type LockKind = "mutex" | "reentrant" | "rw" | "semaphore";

export interface Step {
  /** Who moves: a client (modulo the clients, plus one for the nemesis when it runs). */
  who: number;
  /** Time that passes before the move, in thousandths of the lease. */
  dt: number;
  /** What the one who moves does, 0..99, read by its state (execute.ts). */
  act: number;
  /** The dice of the move's outcomes (dice.ts). */
  luck: number;
}

/**
 * A case may be aimed at one of the situations of the amended rules (situations.ts):
 * normalize() then makes the choices that let the steps reach it, which left to
 * chance come together in a few cases in a thousand.
 */
export const FOCUSES = ["none", "null-ok-stale", "late-renew-after-grant", "reentry-without-outer", "order-not-line-order", "kind-violation"] as const;
export type Focus = (typeof FOCUSES)[number];

export interface Plan {
  focus: Focus;
  format: 1 | 2;
  workload: "fenced-write" | "counter";
  lock: LockKind;
  /** Format 2 with a mutex: whether the header says "lock":"mutex" (it may leave it out). */
  lockInHeader: boolean;
  permits: number;
  /** A reentrant lock's header field; null: left out, re-entries' fences not judged. */
  fenceOnReentry: "same" | "new" | null;
  /** The resource enforces fences. */
  fencing: boolean;
  /** Holders' reads carry their fence (--fence-reads). */
  fenceReads: boolean;
  /** Where fences come from: one counter per key, one per client and key, none at all, or none for some holds. */
  fences: "one-counter" | "per-client" | "none" | "mixed";
  /** The resource log: the resource's memory (line order is effect order), a database's committed decisions (format 2), or none. */
  resource: "memory" | "committed" | "none";
  /** "lazy": a lease that ran out stays its owner's until another hold is granted (a renew or re-entry still succeeds); "strict": it is gone. */
  expiry: "strict" | "lazy";
  /** A re-entry refreshes the lease at the service (the checker credits it or not; this is the service). */
  reentryRefresh: boolean;
  ttlMs: number;
  /** "stormy": many more pauses past the lease than the steps' own waits make. */
  tempo: "steady" | "stormy";
  /** What a holder mostly does: "mixed" (write, read, renew, re-enter, release), "writes" (writes most of all, as --writes-per-hold does). */
  holdMix: "mixed" | "writes";
  keys: number;
  clients: number;
  /** Percent of replies lost (info). */
  infoRate: number;
  nemesis: boolean;
  /** Format 2: waiters are withdrawn (cancelled, cancel-unknown). */
  cancels: boolean;
  /** Format 2: the library tells its user of lost holds (notices). */
  notices: boolean;
  /**
   * Format 2: the clients are adapter programs, and how theirs fail: "none" (not
   * an adapter run, or one that never fails), "timeout" (a lost reply is
   * adapter-timeout, an ordinary info), "bad-line" or "exited" (a lost reply is
   * that protocol error, recorded in protocol-errors.ndjson, and so now and then
   * is a stray line while nothing was outstanding, with no line in the history).
   */
  adapter: "none" | "timeout" | "bad-line" | "exited";
  /** What clients add to an acquire's completion: behind (queueing clients), validity_ms (Redlock), queued_ms. */
  reportsBehind: boolean;
  reportsValidity: boolean;
  reportsQueued: boolean;
  liveness: "lenient" | "strict";
  /** run.json: none, one naming the liveness only, or one with the lease and command timeout (the stuck-lock threshold). */
  runJson: "none" | "plain" | "timeouts";
  /** run.json clock_error (a trace's hosts, checker/clock.ts): every process's bound in ms (0: none), and process 0's when it differs (null: the same). */
  clockErrorMs: number;
  clockErrorOfFirst: number | null;
  /** run.json history_complete: false (a trace's run): nothing proved from an operation's absence. */
  historyIncomplete: boolean;
  /** At the end: the clients' outstanding operations completed (a finished run), or left open (the time limit cut them). */
  ending: "drain" | "open";
  /** What happened to the files: nothing; a killed run's cut-short last line (history or resource log); a whole last line without its newline; a killed run's lines out of order too. */
  damage: "none" | "cut-history" | "cut-resource" | "no-newline" | "killed";
  /** Where a cut-short line is cut, in thousandths of its length. */
  cutAt: number;
  defects: Defect[];
  steps: Step[];
  /** Committed decisions: the log's lines swapped with the next at these places (modulo the lines), so line order is not effect order. */
  swaps: number[];
}

/**
 * Short waits mostly (a client thinks, the others move), now and then a pause past
 * the lease: whoever moves next finds the leases of that moment run out (a frozen
 * holder, a slow reply).
 */
const dt = fc.oneof(
  { weight: 16, arbitrary: fc.integer({ min: 1, max: 30 }) },
  { weight: 1, arbitrary: fc.integer({ min: 250, max: 3000 }) },
);

export const stepArb: fc.Arbitrary<Step> = fc.record({
  who: fc.nat(15),
  dt,
  act: fc.nat(99),
  luck: fc.nat(0xffff),
});

/** Choices drawn before they are made consistent (normalize). */
const raw = fc.record({
  focus: fc.oneof(
    { weight: 12, arbitrary: fc.constant("none" as const) },
    { weight: 5, arbitrary: fc.constantFrom<Focus>("null-ok-stale", "late-renew-after-grant", "reentry-without-outer", "order-not-line-order", "kind-violation") },
  ),
  format: fc.oneof({ weight: 1, arbitrary: fc.constant(1 as const) }, { weight: 2, arbitrary: fc.constant(2 as const) }),
  workload: fc.oneof({ weight: 3, arbitrary: fc.constant("fenced-write" as const) }, { weight: 1, arbitrary: fc.constant("counter" as const) }),
  lock: fc.constantFrom<LockKind>("mutex", "reentrant", "rw", "semaphore"),
  lockInHeader: fc.boolean(),
  permits: fc.integer({ min: 1, max: 3 }),
  fenceOnReentry: fc.constantFrom<"same" | "new" | null>("same", "new", null),
  fencing: fc.oneof({ weight: 2, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
  fenceReads: fc.oneof({ weight: 3, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
  fences: fc.oneof(
    { weight: 6, arbitrary: fc.constant("one-counter" as const) },
    { weight: 2, arbitrary: fc.constant("per-client" as const) },
    { weight: 1, arbitrary: fc.constant("none" as const) },
    { weight: 2, arbitrary: fc.constant("mixed" as const) },
  ),
  resource: fc.oneof(
    { weight: 5, arbitrary: fc.constant("memory" as const) },
    { weight: 4, arbitrary: fc.constant("committed" as const) },
    { weight: 2, arbitrary: fc.constant("none" as const) },
  ),
  expiry: fc.constantFrom("strict" as const, "lazy" as const),
  reentryRefresh: fc.boolean(),
  ttlMs: fc.constantFrom(1000, 100, 10),
  tempo: fc.oneof({ weight: 3, arbitrary: fc.constant("steady" as const) }, { weight: 1, arbitrary: fc.constant("stormy" as const) }),
  holdMix: fc.oneof({ weight: 3, arbitrary: fc.constant("mixed" as const) }, { weight: 1, arbitrary: fc.constant("writes" as const) }),
  keys: fc.integer({ min: 1, max: 3 }),
  clients: fc.integer({ min: 2, max: 5 }),
  infoRate: fc.constantFrom(0, 4, 12),
  nemesis: fc.boolean(),
  cancels: fc.boolean(),
  notices: fc.boolean(),
  adapter: fc.oneof(
    { weight: 6, arbitrary: fc.constant("none" as const) },
    { weight: 1, arbitrary: fc.constantFrom("timeout" as const, "bad-line" as const, "exited" as const) },
  ),
  reportsBehind: fc.boolean(),
  reportsValidity: fc.oneof({ weight: 3, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
  reportsQueued: fc.boolean(),
  liveness: fc.oneof({ weight: 2, arbitrary: fc.constant("lenient" as const) }, { weight: 1, arbitrary: fc.constant("strict" as const) }),
  runJson: fc.constantFrom("plain" as const, "none" as const, "timeouts" as const),
  clockErrorMs: fc.oneof({ weight: 4, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: fc.constantFrom(1, 5, 20) }),
  clockErrorOfFirst: fc.oneof({ weight: 2, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: fc.constantFrom(0, 3, 50) }),
  historyIncomplete: fc.oneof({ weight: 5, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
  ending: fc.oneof({ weight: 3, arbitrary: fc.constant("drain" as const) }, { weight: 1, arbitrary: fc.constant("open" as const) }),
  damage: fc.oneof(
    { weight: 12, arbitrary: fc.constant("none" as const) },
    { weight: 1, arbitrary: fc.constant("cut-history" as const) },
    { weight: 1, arbitrary: fc.constant("cut-resource" as const) },
    { weight: 1, arbitrary: fc.constant("no-newline" as const) },
    { weight: 1, arbitrary: fc.constant("killed" as const) },
  ),
  cutAt: fc.integer({ min: 1, max: 999 }),
  // About half the cases have no defect at all: a correct lock and resource, whose
  // runs are still invalid now and then (fencing off, fences per client, leases
  // that run out under a counter), and valid mostly.
  defects: fc.oneof(
    { weight: 9, arbitrary: fc.constant([] as Defect[]) },
    { weight: 11, arbitrary: fc.subarray([...DEFECTS], { minLength: 1, maxLength: 3 }) },
  ),
  // "max": lengths up to the maximum (fast-check's default size keeps arrays near ten elements).
  steps: fc.array(stepArb, { minLength: 1, maxLength: 80, size: "max" }),
  swaps: fc.array(fc.nat(200), { maxLength: 6 }),
});

/** The choices a focus needs (the steps still decide whether the situation comes). */
function aim(p: Plan): void {
  const add = (...ds: Defect[]): void => {
    p.defects = [...new Set([...p.defects, ...ds])];
  };
  switch (p.focus) {
    case "null-ok-stale":
      // A stale write the history proves alone (fencing off, or a resource that lets it
      // through), in a database whose line for an ok write says accepted: null.
      Object.assign(p, { format: 2, lock: "mutex", workload: "fenced-write", resource: "committed", fences: "one-counter", keys: 1, tempo: "stormy", holdMix: "writes" });
      if (p.fencing) add("stale-accept");
      add("ok-but-null");
      break;
    case "late-renew-after-grant":
      // A renew that re-takes the lock after its lease ran out and another hold was granted.
      Object.assign(p, { keys: 1, expiry: "strict", tempo: "stormy" });
      add("blind-renew");
      break;
    case "reentry-without-outer":
      Object.assign(p, { format: 2, lock: "reentrant", keys: 1 });
      add("reentry-other");
      break;
    case "kind-violation":
      // What the lock kinds' own anomalies need, which a defect among seventeen seldom
      // meets: a service that grants past the kind's rule on one contended key, with
      // more clients than permits; an inner release that frees; a withdrawn entry kept.
      Object.assign(p, { format: 2, keys: 1, permits: Math.min(p.permits, 2) });
      if (p.lock === "mutex") p.lock = "semaphore";
      if (p.lock !== "reentrant" && p.workload === "counter") p.workload = "fenced-write";
      p.clients = Math.max(p.clients, p.permits + 2);
      add(p.lock === "reentrant" ? "inner-release-frees" : "double-grant");
      if (p.cancels) add("cancel-leak");
      break;
    case "order-not-line-order":
      Object.assign(p, { format: 2, lock: "mutex", resource: "committed" });
      if (p.swaps.length === 0) p.swaps = [0, 3, 7];
      break;
    case "none":
      break;
  }
}

/** Which defects can show in a run of this kind: the rest are dropped, so a case's list says what was in play. */
function applies(d: Defect, p: Pick<Plan, "format" | "lock" | "resource" | "workload" | "cancels">): boolean {
  switch (d) {
    case "inner-release-frees":
    case "reentry-other":
      return p.lock === "reentrant";
    case "reentry-fence":
      return p.lock === "reentrant";
    case "cancel-leak":
      return p.cancels;
    case "ok-but-null":
      return p.resource === "committed";
    case "resource-restart":
      return p.resource === "memory";
    case "log-drops-line":
    case "stale-accept":
    case "false-reject":
      return true;
    case "counter-garbage":
      return p.workload === "counter";
    default:
      return true;
  }
}

/**
 * Makes the raw choices a run fencecheck could record: format 1 is a mutex's with no
 * notices, cancels or committed decisions; committed decisions are a mutex's (the
 * other kinds need the resource's own memory); the counter workload is a mutex's or
 * a reentrant lock's, without fenced reads of its holds unless chosen.
 */
export function normalize(r: Omit<Plan, never>): Plan {
  const p = { ...r };
  aim(p);
  if (p.format === 1) {
    p.lock = "mutex";
    p.lockInHeader = false;
    p.cancels = false;
    p.notices = false;
    // An adapter program's run writes format 2.
    p.adapter = "none";
    // `behind` is format 2's (withdrawn waits); validity_ms and queued_ms are format 1's too.
    p.reportsBehind = false;
    if (p.resource === "committed") p.resource = "memory";
  }
  if (p.workload === "counter" && (p.lock === "rw" || p.lock === "semaphore")) p.lock = "mutex";
  if (p.resource === "committed" && p.lock !== "mutex") p.resource = "memory";
  // The resource's rule for an rw lock reads and writes with fences already.
  if (p.lock === "rw" || p.lock === "semaphore") p.fenceReads = false;
  if (p.lock !== "semaphore") p.permits = 1;
  if (p.lock !== "reentrant") p.fenceOnReentry = null;
  if (p.lock !== "mutex") p.lockInHeader = true;
  if (p.resource !== "committed") p.swaps = [];
  if (p.resource === "none" && p.damage === "cut-resource") p.damage = "cut-history";
  // Clock bounds live in run.json.
  if (p.runJson === "none" || p.clockErrorMs === 0) p.clockErrorOfFirst = null;
  if (p.runJson === "none") {
    p.clockErrorMs = 0;
    p.historyIncomplete = false;
  }
  p.defects = p.defects.filter((d) => applies(d, p));
  return p;
}

export const planArb: fc.Arbitrary<Plan> = raw.map(normalize);

/** A line that says what a case is, for reports. */
export function describePlan(p: Plan): string {
  const kind = p.lock === "semaphore" ? `semaphore:${p.permits}` : p.lock;
  const parts = [
    `format ${p.format}`, p.workload, kind, `fencing ${p.fencing ? "on" : "off"}`, `fences ${p.fences}`, `resource ${p.resource}`,
    `ttl ${p.ttlMs} ms`, `${p.clients} clients`, `${p.keys} keys`, `${p.steps.length} steps`,
  ];
  if (p.defects.length) parts.push(`defects ${p.defects.join("+")}`);
  if (p.adapter !== "none") parts.push(`adapter ${p.adapter}`);
  if (p.damage !== "none") parts.push(`damage ${p.damage}`);
  if (p.historyIncomplete) parts.push("history incomplete");
  if (p.clockErrorMs > 0) parts.push(`clocks ±${p.clockErrorMs} ms${p.clockErrorOfFirst === null ? "" : ` (process 0 ±${p.clockErrorOfFirst})`}`);
  return parts.join(", ");
}
