// Reading results.json without trusting it. A stored run may come from another
// version of the checker, so each figure is taken only if it has the expected shape;
// anything else is treated as absent and shown as such, never as a crash.
import type { Results, RunStats, Witness } from "../store/events.ts";

export type Figures = Partial<Pick<RunStats,
  "events" | "duration_s" | "ops" | "ops_per_s" | "acquire_latency_ms" |
  "writes_accepted" | "stale_writes_refused" | "lease_overlaps" | "faults">>;

const isNum = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v);
const isObj = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

export function readFigures(stats: unknown): Figures {
  const s = isObj(stats) ? stats : {};
  const out: Figures = {};
  for (const name of ["events", "duration_s", "ops_per_s", "writes_accepted",
    "stale_writes_refused", "lease_overlaps"] as const) {
    // The format's first description spelt it `lease-overlaps`; accept the hyphenated spelling too.
    const v = s[name] ?? s[name.replace(/_/g, "-")];
    if (isNum(v)) out[name] = v;
  }
  const lat = s.acquire_latency_ms;
  if (lat === null) out.acquire_latency_ms = null;
  else if (isObj(lat) && isNum(lat.p50) && isNum(lat.p99) && isNum(lat.max)) {
    out.acquire_latency_ms = { p50: lat.p50, p99: lat.p99, max: lat.max };
  }
  if (isObj(s.faults)) {
    const faults: Record<string, number> = {};
    for (const [f, n] of Object.entries(s.faults)) if (isNum(n)) faults[f] = n;
    out.faults = faults;
  }
  if (isObj(s.ops)) {
    const ops: RunStats["ops"] = {};
    for (const [f, c] of Object.entries(s.ops)) {
      if (!isObj(c)) continue;
      ops[f] = { ok: isNum(c.ok) ? c.ok : 0, fail: isNum(c.fail) ? c.fail : 0, info: isNum(c.info) ? c.info : 0 };
    }
    out.ops = ops;
  }
  return out;
}

export type Verdict = "VALID" | "INVALID" | "UNKNOWN";

export function verdictOf(results: Pick<Results, "valid">): Verdict {
  return results.valid === true ? "VALID" : results.valid === false ? "INVALID" : "UNKNOWN";
}

/** A witness with the fields a report relies on checked and defaulted. */
export interface WitnessView {
  witness: Witness;
  explanation: string;
  key?: string;
  events: number[];
  seqs: number[];
}

export interface AnomalyGroup {
  type: string;
  witnesses: WitnessView[];
  /**
   * A liveness finding (format 2's stuck-lock): "reported" alongside the anomalies
   * but not counted toward the verdict; "counted" under --liveness strict.
   */
  liveness?: "reported" | "counted";
}

const nums = (v: unknown): number[] => (Array.isArray(v) ? v.filter(isNum) : []);

/**
 * Each anomaly type with its witnesses: those `anomaly_types` lists first, in its
 * order, then any other type `anomalies` has witnesses for, so none goes unseen.
 */
export function anomalyGroups(results: Pick<Results, "anomaly_types" | "anomalies">): AnomalyGroup[] {
  const anomalies: Record<string, unknown> = isObj(results.anomalies) ? results.anomalies : {};
  const listed = Array.isArray(results.anomaly_types) ? results.anomaly_types.map(String) : [];
  const types = [...new Set([...listed, ...Object.keys(anomalies)])];
  const groups: AnomalyGroup[] = [];
  for (const type of types) {
    const raw = anomalies[type];
    const list: unknown[] = Array.isArray(raw) ? raw : [];
    if (list.length === 0 && !listed.includes(type)) continue;
    groups.push({ type, witnesses: witnessViews(list) });
  }
  return groups;
}

function witnessViews(list: readonly unknown[]): WitnessView[] {
  return list.filter(isObj).map((w): WitnessView => ({
    witness: w as Witness,
    explanation: typeof w.explanation === "string" ? w.explanation : "(no explanation recorded)",
    key: typeof w.key === "string" ? w.key : undefined,
    events: nums(w.events),
    seqs: nums(w.seqs),
  }));
}

/**
 * What the page lists and highlights: the anomalies, then the liveness findings
 * (results' `liveness`). Under --liveness strict a finding is also among the
 * anomalies: it is listed once, there, marked as counted.
 */
export function reportGroups(results: Pick<Results, "anomaly_types" | "anomalies" | "liveness">): AnomalyGroup[] {
  const groups = anomalyGroups(results);
  const live = results.liveness;
  if (!isObj(live) || !isObj(live.findings)) return groups;
  for (const [type, raw] of Object.entries(live.findings)) {
    const counted = groups.find((g) => g.type === type);
    if (counted) counted.liveness = "counted";
    else if (Array.isArray(raw) && raw.length > 0) groups.push({ type, witnesses: witnessViews(raw), liveness: live.strict === true ? "counted" : "reported" });
  }
  return groups;
}

/**
 * How many times an adapter program broke the protocol (stats.protocol_errors),
 * and where each is; null when none did, or the results predate the count. Why
 * that makes the run UNKNOWN is its unknown reason (stats.unknown_reasons), said
 * beside; an INVALID run has its anomalies to say, and this says what the errors
 * would have made of it alone.
 */
export function protocolErrorsLine(results: Pick<Results, "valid" | "stats">): string | null {
  const n = results.stats?.protocol_errors;
  if (!isNum(n) || n <= 0) return null;
  const broke = `${n} (each a line of protocol-errors.ndjson, and of logs/worker-N.log)`;
  return results.valid === false ? `${broke}; without its anomalies the run would be UNKNOWN` : broke;
}
