// The verdict and the shape of results.json: docs/history-format.md "results.json"
// and docs/anomalies.md (the opening table, "Why a run is UNKNOWN").
//
// `valid` is false when any anomaly type that counts was found, "unknown" when
// none was but a reason to doubt the check was listed (an adapter's protocol
// errors among them), true otherwise.
// `anomaly_types` lists the types found in ORDER below: the order
// docs/history-format.md ("results.json") gives. `anomalies` keeps at most 100
// witnesses per type, sorted by the first event they cite; `anomaly_counts`
// has the full number.
import type { Findings, Witness } from "./types.ts";

export const ORDER = [
  "stale-write-accepted",
  "interleaved-writers",
  "false-rejection",
  "duplicate-fence",
  "fence-regression",
  "lost-update",
  "mutex-violation",
  "expired-on-arrival",
  "lost-lock-unnoticed",
  "orphan-lock-node",
  "rw-violation",
  "semaphore-overflow",
  "reentrancy-violation",
  "grant-after-cancel",
  "strict-mutex-violation",
  "strict-rw-violation",
  "strict-semaphore-violation",
  "stuck-lock",
];

export const KEPT = 100;

export interface ReferenceResults {
  valid: true | false | "unknown";
  anomaly_types: string[];
  anomalies: Record<string, Array<{ key?: string; events?: number[]; seqs?: number[]; explanation: string }>>;
  liveness?: { strict: boolean; findings: Record<string, Witness[]> };
  /** Clocks that may be off (clocks.ts): what holds for some placement of the instants only. */
  possible?: { anomaly_types: string[]; anomalies: Record<string, Witness[]>; anomaly_counts: Record<string, number> };
  stats: { anomaly_counts: Record<string, number>; unknown_reasons: string[]; protocol_errors: number; checker: "reference" };
}

const firstEvent = (w: Witness) => (w.events && w.events.length ? Math.min(...w.events) : Infinity);

export function verdict(found: Findings, unknownReasons: string[], protocolErrors: number, liveness?: { strict: boolean; findings: Findings }): ReferenceResults {
  const types = ORDER.filter((t) => (found[t]?.length ?? 0) > 0);
  for (const t of Object.keys(found)) if (!ORDER.includes(t)) throw new Error(`reference checker: anomaly type ${t} has no place in ORDER`);
  const anomalies: ReferenceResults["anomalies"] = {};
  const counts: Record<string, number> = {};
  for (const t of types) {
    counts[t] = found[t].length;
    anomalies[t] = [...found[t]].sort((a, b) => firstEvent(a) - firstEvent(b)).slice(0, KEPT);
  }
  const results: ReferenceResults = {
    valid: types.length > 0 ? false : unknownReasons.length > 0 ? "unknown" : true,
    anomaly_types: types,
    anomalies,
    stats: { anomaly_counts: counts, unknown_reasons: unknownReasons, protocol_errors: protocolErrors, checker: "reference" },
  };
  if (liveness) {
    const kept: Findings = {};
    for (const [t, ws] of Object.entries(liveness.findings)) kept[t] = [...ws].sort((a, b) => firstEvent(a) - firstEvent(b)).slice(0, KEPT);
    results.liveness = { strict: liveness.strict, findings: kept };
  }
  return results;
}
