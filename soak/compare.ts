// Tonight against last night: what changed, configuration by configuration. This is
// what a nightly soak is read for; the table below it says what is, this says what
// moved. A detection rate that fell counts only when the fall is larger than the
// noise of the two run counts (two standard errors of the difference of two
// proportions, pooled): with three runs a night, 3/3 then 2/3 is noise, 3/3 then
// 0/3 is not.
import type { Change, ChangeKind, ConfigSummary, SoakSummary } from "./summary.ts";


/** Kinds a person must look at first: something got worse. */
export const WORSE: ReadonlySet<ChangeKind> = new Set(["newly-failing", "new-anomaly-type", "detection-fell", "new-crashes"]);

export function compareSummaries(now: Pick<SoakSummary, "configurations">, before: Pick<SoakSummary, "configurations" | "started">): Change[] {
  const changes: Change[] = [];
  const prev = new Map(before.configurations.map((c) => [c.name, c]));
  const when = `the soak of ${before.started}`;
  for (const c of now.configurations) {
    const p = prev.get(c.name);
    if (!p) {
      changes.push({ config: c.name, kind: "added", sentence: `${c.name} is new: ${when} did not run it` });
      continue;
    }
    prev.delete(c.name);
    changes.push(...configChanges(c, p, when));
  }
  for (const p of prev.values()) changes.push({ config: p.name, kind: "removed", sentence: `${p.name} ran in ${when} but not in this one` });
  // Worse first, then the rest, each in the matrix's order.
  return [...changes.filter((c) => WORSE.has(c.kind)), ...changes.filter((c) => !WORSE.has(c.kind))];
}

function configChanges(c: ConfigSummary, p: ConfigSummary, when: string): Change[] {
  const out: Change[] = [];
  const add = (kind: ChangeKind, sentence: string): void => void out.push({ config: c.name, kind, sentence });
  if (c.expectation === "missed" && p.expectation !== "missed")
    add("newly-failing", `${c.name} now misses its expectation (${c.expect_text}), which it ${p.expectation === "met" ? "met" : "could not be judged on"} in ${when}: ${c.why}`);
  if (c.expectation === "met" && p.expectation === "missed") add("fixed", `${c.name} meets its expectation (${c.expect_text}) again; in ${when} ${p.why}`);
  for (const t of Object.keys(c.anomalies))
    if (!(t in p.anomalies)) add("new-anomaly-type", `${c.name} shows ${t} (in ${c.anomalies[t]} of ${checked(c)} runs), which ${when} never showed`);
  for (const t of Object.keys(p.anomalies))
    if (!(t in c.anomalies) && checked(c) > 0) add("anomaly-type-gone", `${c.name} no longer shows ${t} (${when}: ${p.anomalies[t]} of ${checked(p)} runs)`);
  for (const d of c.detection) {
    const pd = p.detection.find((x) => x.type === d.type);
    if (!pd || pd.runs === 0 || d.runs === 0) continue;
    const fall = pd.rate - d.rate;
    const noise = noiseOf(pd.found, pd.runs, d.found, d.runs);
    if (fall > noise)
      add("detection-fell", `${c.name}: ${d.type} detected in ${d.found} of ${d.runs} runs, down from ${pd.found} of ${pd.runs} in ${when}, a fall of ${Math.round(fall * 100)} points against ${Math.round(noise * 100)} of noise`);
  }
  if (c.counts.crashed > 0 && p.counts.crashed === 0) add("new-crashes", `${c.name}: ${c.counts.crashed} run${c.counts.crashed === 1 ? "" : "s"} crashed, none in ${when}`);
  if (c.counts.crashed === 0 && p.counts.crashed > 0 && checked(c) > 0) add("crashes-gone", `${c.name}: no run crashed (${when}: ${p.counts.crashed})`);
  return out;
}

/** Two standard errors of the difference of two proportions, pooled. */
export function noiseOf(found1: number, n1: number, found2: number, n2: number): number {
  const p = (found1 + found2) / (n1 + n2);
  return 2 * Math.sqrt(p * (1 - p) * (1 / n1 + 1 / n2));
}

function checked(c: ConfigSummary): number {
  return c.counts.valid + c.counts.invalid + c.counts.unknown;
}
