// The soak summary for the terminal: what missed first, then what changed since
// the last soak, then one row per configuration. Configuration names and anomaly
// types come from files a user may have written, so they pass through `plain`.
import { plain } from "../reports/index.ts";
import { WORSE } from "./compare.ts";
import { pct, type ConfigSummary, type SoakSummary } from "./summary.ts";
import { renderLibraryTable } from "./libraries.ts";

export function renderTable(s: SoakSummary): string {
  const out: string[] = [];
  const missed = s.configurations.filter((c) => c.expectation === "missed");
  const part = partOf(s);
  out.push(`${plain(s.verdict)}  (soak of matrix ${plain(s.matrix.name)}, seed ${s.seed}${part ? `, ${part}` : ""}, exit ${s.exit_code})`);
  for (const c of missed) out.push(`  MISSED ${plain(c.name)}: ${plain(c.why)}`);
  for (const c of s.configurations.filter((c) => c.counts.crashed > 0))
    for (const r of c.runs.filter((r) => r.status === "crashed")) out.push(`  CRASHED ${plain(c.name)} #${r.index} (seed ${r.seed}): ${plain(r.error ?? "")}`);
  if (s.compared_with !== null) {
    out.push("");
    if (s.changes.length === 0) out.push(`No change since ${plain(s.compared_with)}.`);
    else {
      out.push(`Changed since ${plain(s.compared_with)}:`);
      for (const ch of s.changes) out.push(`  ${WORSE.has(ch.kind) ? "WORSE" : "     "} ${ch.kind.padEnd(17)} ${plain(ch.sentence)}`);
    }
  } else out.push("", `No earlier soak of matrix ${plain(s.matrix.name)} to compare with.`);
  out.push("");
  const header = ["configuration", "expect", "runs", "valid", "invalid", "unknown", "crashed", "not run", "expectation", "anomalies (runs)", "detection", "stale refused (runs)", "acquire p50/p99 ms", "faults"];
  const rows = s.configurations.map((c) => row(c));
  out.push(...grid([header, ...rows]));
  out.push(...renderLibraryTable(s.configurations));
  const notRun = s.configurations.flatMap((c) => c.not_run);
  if (notRun.length) {
    out.push("", `Not run (${notRun.length}):`);
    for (const r of notRun) out.push(`  ${plain(r.config)} #${r.index} (seed ${r.seed}): ${plain(r.reason)}`);
  }
  out.push("", `Wall time ${duration(s.wall_s)}${s.disk_bytes === null ? "" : `, ${megabytes(s.disk_bytes)} on disk`}.`);
  return out.join("\n");
}

function row(c: ConfigSummary): string[] {
  const n = c.counts;
  const ran = n.valid + n.invalid + n.unknown + n.crashed + n.interrupted;
  return [
    plain(c.name),
    plain(c.expect_text),
    `${ran}/${c.planned}`,
    String(n.valid),
    String(n.invalid),
    String(n.unknown),
    String(n.crashed),
    String(n.not_run + n.interrupted),
    c.expectation === "met" ? "met" : c.expectation === "missed" ? "MISSED" : c.expectation === "observed" ? "observed" : "not judged",
    Object.entries(c.anomalies).map(([t, k]) => `${plain(t)} ×${k}`).join(", ") || "-",
    c.detection.map((d) => `${pct(d.rate)} (${d.found}/${d.runs})`).join(", ") || "-",
    c.exercised ? `${c.exercised.refused}/${c.exercised.runs}` : "-",
    c.acquire_ms ? `${round(c.acquire_ms.p50)} / ${round(c.acquire_ms.p99)}` : "-",
    Object.entries(c.faults).map(([f, k]) => `${plain(f.replace(/^start-/, ""))} ×${k}`).join(", ") || "-",
  ];
}

function grid(rows: string[][]): string[] {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  return rows.map((r) => r.map((cell, i) => cell.padEnd(widths[i])).join("  ").trimEnd());
}

function round(ms: number): string {
  return ms >= 100 ? String(Math.round(ms)) : ms.toFixed(1);
}

/** Which part of a sharded soak this is, if any: "shard 2/6", "merged from shards 1-5 of 6, 6 missing". */
export function partOf(s: Pick<SoakSummary, "shard" | "merged">): string | null {
  if (s.shard) return `shard ${s.shard.index}/${s.shard.count}`;
  if (!s.merged) return null;
  const given = s.merged.shards.map((x) => x.index);
  return `merged from shard${given.length === 1 ? "" : "s"} ${given.join(", ")} of ${s.merged.count}${s.merged.missing.length ? `, ${s.merged.missing.join(", ")} missing` : ""}`;
}

export function duration(s: number): string {
  if (s < 60) return `${Math.round(s)} s`;
  const m = Math.floor(s / 60);
  return m < 60 ? `${m} min ${Math.round(s - 60 * m)} s` : `${Math.floor(m / 60)} h ${m % 60} min`;
}

export function megabytes(bytes: number): string {
  return `${(bytes / 1e6).toFixed(bytes < 1e7 ? 1 : 0)} MB`;
}
