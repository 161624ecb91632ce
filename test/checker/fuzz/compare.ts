// What it means for two checkers to agree on a run: the same `valid`, the same
// anomaly types as sets, the same count per type, and the same number of
// protocol errors read from the run directory. The order of the types is
// compared too, but apart: results.json lists them "in the checker's order", which
// two checkers may choose differently without either being wrong about the run.
import type { Verdict } from "./checkers.ts";

export interface Comparison {
  /** What differs in the verdicts, one line each; empty when they agree. */
  differences: string[];
  /**
   * The kind of disagreement, for shrinking: the anomaly types found or counted
   * differently, else the two valids. A case is shrunk to smaller ones that
   * disagree the same way, not to whatever other disagreement they show.
   */
  signature: string;
  /** The same types in another order (not a disagreement). */
  orderDiffers: boolean;
}

/** Counts without zeros: a type counted 0 and one left out say the same. */
function nonZero(c: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(c).filter(([, n]) => n !== 0).sort(([a], [b]) => a.localeCompare(b)));
}

export function compare(a: Verdict, b: Verdict): Comparison {
  const differences: string[] = [];
  if (a.valid !== b.valid) differences.push(`valid: ${JSON.stringify(a.valid)} against ${JSON.stringify(b.valid)}`);
  const onlyA = a.anomaly_types.filter((t) => !b.anomaly_types.includes(t));
  const onlyB = b.anomaly_types.filter((t) => !a.anomaly_types.includes(t));
  if (onlyA.length || onlyB.length) differences.push(`anomaly_types: only the first finds [${onlyA.join(", ")}], only the second [${onlyB.join(", ")}]`);
  const ca = nonZero(a.anomaly_counts), cb = nonZero(b.anomaly_counts);
  for (const t of new Set([...Object.keys(ca), ...Object.keys(cb)]))
    if (ca[t] !== cb[t]) differences.push(`anomaly_counts["${t}"]: ${ca[t] ?? 0} against ${cb[t] ?? 0}`);
  if (a.protocol_errors !== b.protocol_errors) differences.push(`protocol_errors: ${a.protocol_errors} against ${b.protocol_errors}`);
  const pa = nonZero(a.possible_counts ?? {}), pb = nonZero(b.possible_counts ?? {});
  for (const t of new Set([...Object.keys(pa), ...Object.keys(pb)]))
    if (pa[t] !== pb[t]) differences.push(`possible anomaly_counts["${t}"] (clock bounds): ${pa[t] ?? 0} against ${pb[t] ?? 0}`);
  const orderDiffers = differences.length === 0 && a.anomaly_types.join() !== b.anomaly_types.join();
  const types = [...new Set([...onlyA, ...onlyB, ...Object.keys({ ...ca, ...cb }).filter((t) => ca[t] !== cb[t])])].sort();
  const signature = differences.length === 0 ? "" : types.length ? `types ${types.join(",")}` : `valid ${JSON.stringify(a.valid)}/${JSON.stringify(b.valid)}`;
  return { differences, signature, orderDiffers };
}

/** A verdict in one line: VALID, UNKNOWN (reasons) or INVALID with its types and counts. */
export function verdictLine(v: Verdict): string {
  if (v.valid === true) return "VALID";
  if (v.valid === "unknown") return `UNKNOWN (${v.unknown_reasons.join("; ")})`;
  return `INVALID ${v.anomaly_types.map((t) => `${t} x${v.anomaly_counts[t] ?? "?"}`).join(", ")}`;
}
