// Checking spans as they arrive, in memory bounded by the window, not the stream.
//
// Spans are buffered per lock key. The stream's clock is the latest span end seen
// (trace time: a replay of an hour goes as fast as it is sent). A key's buffered
// spans are settled up to that clock less the window: they are grouped into
// holds (by lock.owner; a span with none stands alone), each hold reaching from
// its first span to its release, or, with no release span yet, to the end of its
// last lease (grant or renew plus lock.ttl_ms) so that a holder whose release was
// dropped still shuts out the next one for as long as the checker's rule says.
// The longest run of holds from the oldest whose reach is behind the clock, and
// that no later hold overlaps, is the settled part: it becomes a history
// (traceHistory), is checked by the checker (analyze, in memory), and dropped.
// Since no hold crosses a cut, two holders at once are always in one window.
// What a later window needs of an earlier one is carried per key: the highest
// fence granted and the highest fence the resource accepted, so a grant that
// goes back (fence-regression, duplicate-fence) or an accepted write with a
// lower fence (stale-write-accepted) after a cut is still found; and the last
// decision order, so a window's first decision is not taken for one after a gap.
//
// A span that starts before its key's last cut arrived after the part it belongs
// to was judged: it is late, kept in the spool (the offline check reads it) and
// counted, never checked live.
import { analyze, MAX_WITNESSES } from "../../checker/index.ts";
import { clockBounds, parseClockError, wholeMillisecondHosts, withPrecision, type HostClocks } from "../files.ts";
import { BadInput } from "../../lib/exit.ts";
import { ANOMALY_TYPES, type HistoryEvent, type Results, type Validity, type Witness } from "../../store/events.ts";
import type { Span } from "../otlp-json.ts";
import { traceHistory, type Gaps } from "../to-history.ts";

export interface Finding {
  type: string;
  key: string;
  explanation: string;
  /** The spans the witness rests on. */
  spans: Array<{ trace_id: string; span_id: string }>;
}

interface Mark {
  fence: number;
  owner: string;
  traceId: string;
  spanId: string;
}

interface KeyWindow {
  /** Buffered holds, and those with an owner by it: kept as spans arrive, not regrouped at each settling. */
  holds: Hold[];
  byOwner: Map<string, Hold>;
  /** Spans that start before it are late; null before the first cut. */
  cut: bigint | null;
  granted: Mark | null;
  accepted: Mark | null;
  /** The highest lock.decision.order settled: the next window's decisions go on from it. */
  lastOrder: number | undefined;
}

interface Hold {
  owner: string | undefined;
  spans: Span[];
  start: bigint;
  end: bigint;
  released: boolean;
  leaseEnd: bigint;
}

export interface LiveCounts {
  spans_checked: number;
  spans_late: number;
  other_spans: number;
  windows_checked: number;
  /** Windows the conventions refused as a whole (two overlapping spans of a thread): not checked, the verdict at best unknown. */
  windows_refused: number;
}

const CLIENT = new Set(["lock.acquire", "lock.renew", "lock.release", "lock.write", "lock.read"]);
const DECISION = "lock.decision";

export class LiveCheck {
  private readonly keys = new Map<string, KeyWindow>();
  /** The stream's clock: the latest span end seen. */
  private newest: bigint | null = null;
  /** Where history times count from: the first span's start, so a window's times are the stream's. */
  private origin: bigint | null = null;
  private settledTo: bigint | null = null;
  private readonly step: bigint;
  buffered = 0;
  readonly counts: LiveCounts = { spans_checked: 0, spans_late: 0, other_spans: 0, windows_checked: 0, windows_refused: 0 };
  /** traceHistory's Gaps, summed over the windows (other_spans counted in add(): only lock spans reach a window). */
  private readonly gaps: Gaps = {
    other_spans: 0,
    holds_without_release: 0,
    operations_without_acquire: 0,
    writes_without_decision: 0,
    decisions_without_write: 0,
    decisions_missing: 0,
    starts_moved_within_precision: 0,
    starts_moved_within_clock_error: 0,
  };
  private valid: Validity = true;
  private readonly anomalyCounts: Record<string, number> = {};
  /** Findings that hold only for some placement of the instants within the clock bounds (checker/clock.ts), by type. */
  private readonly possibleCounts: Record<string, number> = {};
  private readonly witnesses: Record<string, Witness[]> = {};
  private readonly unknownReasons = new Map<string, number>();
  /** --clock-error's bounds (none given: 0 for every host). */
  private readonly clocks: HostClocks;

  constructor(private readonly opts: { windowNs: bigint; run: string; onFinding: (f: Finding) => void; onLate: (span: Span, cut: bigint) => void; onRefused: (key: string, message: string) => void; clocks?: HostClocks }) {
    // Settling re-groups a key's buffer; doing it at most every tenth of a window keeps that cost per span constant.
    this.step = opts.windowNs / 10n > 0n ? opts.windowNs / 10n : 1n;
    this.clocks = opts.clocks ?? parseClockError("0", null);
  }

  /** Keys with spans waiting. */
  get keysOpen(): number {
    let n = 0;
    for (const k of this.keys.values()) if (k.holds.length) n++;
    return n;
  }

  /** Takes spans that are on disk (the spool), in the spool's order. Returns how many were late. */
  add(spans: readonly Span[]): number {
    let late = 0;
    for (const span of spans) {
      if (!CLIENT.has(span.name) && span.name !== DECISION) {
        this.counts.other_spans++;
        continue;
      }
      const key = span.attributes["lock.key"] as string;
      let k = this.keys.get(key);
      if (!k) this.keys.set(key, (k = { holds: [], byOwner: new Map(), cut: null, granted: null, accepted: null, lastOrder: undefined }));
      if (k.cut !== null && span.start < k.cut) {
        late++;
        this.counts.spans_late++;
        this.opts.onLate(span, k.cut);
        continue;
      }
      addToHold(k, span);
      this.buffered++;
      this.origin ??= span.start;
      if (this.newest === null || span.end > this.newest) this.newest = span.end;
    }
    if (this.newest !== null) {
      const upTo = this.newest - this.opts.windowNs;
      if (this.settledTo === null || upTo - this.settledTo >= this.step) this.settle(upTo);
    }
    return late;
  }

  /** Settles every key up to `upTo` (null: everything, at the end). */
  settle(upTo: bigint | null): void {
    if (upTo !== null) this.settledTo = upTo;
    for (const [key, k] of this.keys) if (k.holds.length) this.cutKey(key, k, upTo);
  }

  private cutKey(key: string, k: KeyWindow, upTo: bigint | null): void {
    // Spans arrive nearly in time order, so this sort of a mostly sorted list is close to linear.
    const holds = k.holds.sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0));
    let reach: bigint | null = null;
    let settled = 0;
    let i = 0;
    for (; i < holds.length; i++) {
      const h = holds[i];
      if (reach !== null && h.start > reach) settled = i;
      const r = reachOf(h);
      if (reach === null || r > reach) reach = r;
      if (upTo !== null && reach > upTo) break;
    }
    if (i === holds.length) settled = holds.length;
    if (settled === 0) return;
    const done = holds.slice(0, settled);
    let cut = done[0].end;
    const spans: Span[] = [];
    for (const h of done) {
      const r = reachOf(h);
      if (r > cut) cut = r;
      for (const s of h.spans) spans.push(s);
      if (h.owner !== undefined) k.byOwner.delete(h.owner);
    }
    k.holds = holds.slice(settled);
    k.cut = k.cut === null || cut > k.cut ? cut : k.cut;
    this.buffered -= spans.length;
    this.checkWindow(key, k, spans);
  }

  private checkWindow(key: string, k: KeyWindow, spans: Span[]): void {
    this.counts.spans_checked += spans.length;
    this.carried(key, k, spans);
    const orderBefore = k.lastOrder === undefined ? undefined : new Map([[key, k.lastOrder]]);
    for (const s of spans) {
      const order = s.name === DECISION ? s.attributes["lock.decision.order"] : undefined;
      if (typeof order === "number" && (k.lastOrder === undefined || order > k.lastOrder)) k.lastOrder = order;
    }
    if (!spans.some((s) => CLIENT.has(s.name))) return; // decisions alone (their holds' spans were not sent): carried() judged them
    // Each host's bound (--clock-error), at least 1 ms where its spans start on
    // whole milliseconds, as the file check places them (files.ts).
    const hosts = withPrecision(this.clocks, wholeMillisecondHosts(spans));
    let history;
    try {
      history = traceHistory(spans, this.opts.run, hosts.of, { origin: this.origin ?? undefined, orderBefore });
    } catch (err) {
      if (!(err instanceof BadInput)) throw err;
      this.counts.windows_refused++;
      this.unknown(`a window of key ${JSON.stringify(key)} breaks the conventions and was not checked`);
      this.opts.onRefused(key, err.message);
      return;
    }
    this.counts.windows_checked++;
    for (const g of Object.keys(this.gaps) as Array<keyof Gaps>) this.gaps[g] += history.gaps[g];
    // As HistoryWriter orders a run's history: by time, then arrival.
    const events = history.events.map((e, i) => ({ ...e, index: i }) as HistoryEvent);
    events.sort((a, b) => a.time - b.time || a.index - b.index);
    events.forEach((e, i) => (e.index = i));
    // As the file check's run.json says (history_complete false): a trace may lack operations, so nothing is proved from their absence.
    // What holds only for some placement within the bounds is counted apart, as possible.
    const clock = clockBounds(hosts, history.processes).bounds;
    const { results } = analyze({ header: history.header, events, decisions: history.resource }, { historyComplete: false, clock });
    for (const [type, n] of Object.entries(results.possible?.anomaly_counts ?? {})) this.possibleCounts[type] = (this.possibleCounts[type] ?? 0) + n;
    if (results.valid === "unknown") for (const r of (results.stats.unknown_reasons as string[]) ?? []) this.unknown(r);
    const counts = (results.stats.anomaly_counts ?? {}) as Record<string, number>;
    for (const [type, list] of Object.entries(results.anomalies)) {
      this.anomalyCounts[type] = (this.anomalyCounts[type] ?? 0) + (counts[type] ?? list.length);
      for (const w of list) {
        const ids = new Set<string>();
        const spansOf: Finding["spans"] = [];
        const note = (v: unknown) => {
          const { trace_id, span_id } = (v ?? {}) as { trace_id?: string; span_id?: string };
          if (trace_id && span_id && !ids.has(span_id)) ids.add(span_id), spansOf.push({ trace_id, span_id });
        };
        for (const e of w.events ?? []) note(events[e]?.value);
        for (const s of w.seqs ?? []) note(history.resource?.[s - 1]);
        this.found({ type, key: w.key ?? key, explanation: w.explanation, spans: spansOf }, { ...w, spans: spansOf }, false);
      }
    }
  }

  /**
   * What an earlier window of the key left: a lower fence granted or accepted
   * after a cut. A window of decisions alone, which traceHistory cannot read (no
   * lock spans), is judged here against its own earlier decisions too, as the
   * file check judges a decision whose hold the trace lacks.
   */
  private carried(key: string, k: KeyWindow, spans: Span[]): void {
    const decisionsAlone = !spans.some((s) => CLIENT.has(s.name));
    const byEnd = [...spans].sort((a, b) => (a.end < b.end ? -1 : a.end > b.end ? 1 : 0));
    const grants = byEnd.filter((s) => s.name === "lock.acquire" && outcome(s) === "ok" && typeof s.attributes["lock.fence"] === "number");
    const accepted = byEnd
      .filter((s) => s.name === DECISION && s.attributes["lock.decision.accepted"] === true && s.attributes["lock.operation"] !== "read" && typeof s.attributes["lock.fence"] === "number")
      .sort((a, b) => Number(a.attributes["lock.decision.order"] ?? 0) - Number(b.attributes["lock.decision.order"] ?? 0));
    const before = { granted: k.granted, accepted: k.accepted };
    for (const s of grants) {
      const m = mark(s);
      const top = before.granted;
      if (top && m.fence <= top.fence) {
        const type = m.fence === top.fence ? "duplicate-fence" : "fence-regression";
        this.found(
          {
            type,
            key,
            explanation: `On key ${JSON.stringify(key)} hold ${JSON.stringify(m.owner)} was granted fence ${m.fence} after hold ${JSON.stringify(top.owner)} had been granted fence ${top.fence} in an earlier window of the live check: fences must grow.`,
            spans: [ids(top), ids(m)],
          },
          undefined,
          true,
        );
      }
      if (!k.granted || m.fence > k.granted.fence) k.granted = m;
    }
    for (const s of accepted) {
      const m = mark(s);
      const top = decisionsAlone ? k.accepted : before.accepted;
      if (top && m.fence < top.fence) {
        this.found(
          {
            type: "stale-write-accepted",
            key,
            explanation: `On key ${JSON.stringify(key)} the resource accepted a write by ${JSON.stringify(m.owner)} with fence ${m.fence} after it had accepted one by ${JSON.stringify(top.owner)} with the higher fence ${top.fence}${top === before.accepted ? " in an earlier window of the live check" : ""}.`,
            spans: [ids(top), ids(m)],
          },
          undefined,
          true,
        );
      }
      if (!k.accepted || m.fence > k.accepted.fence) k.accepted = m;
    }
  }

  private found(f: Finding, witness: Witness | undefined, count: boolean): void {
    this.valid = false;
    if (count) this.anomalyCounts[f.type] = (this.anomalyCounts[f.type] ?? 0) + 1;
    const list = (this.witnesses[f.type] ??= []);
    if (list.length < MAX_WITNESSES) list.push(witness ?? { key: f.key, explanation: f.explanation, spans: f.spans });
    this.opts.onFinding(f);
  }

  private unknown(reason: string): void {
    if (this.valid === true) this.valid = "unknown";
    this.unknownReasons.set(reason, (this.unknownReasons.get(reason) ?? 0) + 1);
  }

  /** results.json of the stream so far: the windows' findings, counted in full, witnesses up to MAX_WITNESSES a type. */
  results(): Results {
    // In the checker's order of types, as a run's results.json lists them.
    const rank = (t: string) => ((ANOMALY_TYPES as readonly string[]).indexOf(t) + ANOMALY_TYPES.length + 1) % (ANOMALY_TYPES.length + 1);
    const types = Object.keys(this.anomalyCounts).sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
    return {
      valid: this.valid,
      anomaly_types: types,
      anomalies: Object.fromEntries(types.map((t) => [t, this.witnesses[t] ?? []])),
      ...(Object.keys(this.possibleCounts).length ? { possible: { anomaly_types: Object.keys(this.possibleCounts).sort((a, b) => rank(a) - rank(b)), anomalies: {}, anomaly_counts: { ...this.possibleCounts } } } : {}),
      stats: {
        anomaly_counts: { ...this.anomalyCounts },
        unknown_reasons: [...this.unknownReasons].map(([r, n]) => (n > 1 ? `${r} (${n} windows)` : r)),
        live: { ...this.counts },
      },
    };
  }

  /** What the trace lacked, summed over the windows (traceHistory's Gaps). */
  totalGaps(): Gaps {
    return { ...this.gaps, other_spans: this.counts.other_spans };
  }
}

/** A span joins its hold (by lock.owner; a read, or a span with none, is one of its own), which reaches as far as its spans and its leases. */
function addToHold(k: KeyWindow, s: Span): void {
  const o = s.attributes["lock.owner"];
  const owner = typeof o === "string" && s.name !== "lock.read" ? o : undefined;
  let h = owner === undefined ? undefined : k.byOwner.get(owner);
  if (!h) {
    h = { owner, spans: [], start: s.start, end: s.end, released: false, leaseEnd: s.end };
    k.holds.push(h);
    if (owner !== undefined) k.byOwner.set(owner, h);
  }
  h.spans.push(s);
  if (s.start < h.start) h.start = s.start;
  if (s.end > h.end) h.end = s.end;
  if (s.name === "lock.release") h.released = true;
  const ttl = s.attributes["lock.ttl_ms"];
  if ((s.name === "lock.acquire" || s.name === "lock.renew") && outcome(s) !== "fail" && typeof ttl === "number") {
    const lease = s.end + BigInt(Math.round(ttl * 1e6));
    if (lease > h.leaseEnd) h.leaseEnd = lease;
  }
}

/** How far a hold keeps its key's window open: to its release span, or, with none yet, to the end of its last lease. */
const reachOf = (h: Hold): bigint => (h.released ? h.end : h.leaseEnd > h.end ? h.leaseEnd : h.end);

function outcome(s: Span): string {
  const o = s.attributes["lock.outcome"];
  return typeof o === "string" ? o : s.status === 2 ? "unknown" : "ok";
}

const mark = (s: Span): Mark => ({ fence: s.attributes["lock.fence"] as number, owner: String(s.attributes["lock.owner"]), traceId: s.traceId, spanId: s.spanId });
const ids = (m: Mark) => ({ trace_id: m.traceId, span_id: m.spanId });
