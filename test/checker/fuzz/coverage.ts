// What a fuzz session reached: how many cases per anomaly type (found by either
// checker), per verdict, lock kind, format, workload, resource log, damage, adapter, focus,
// and per situation the history shows (situations.ts). A fuzz that never makes a
// kind of run cannot find a disagreement about it; this table says which kinds it made.
import { ANOMALY_TYPES, LIVENESS_TYPES } from "../../../store/events.ts";
import type { Verdict } from "./checkers.ts";
import type { CaseResult } from "./property.ts";
import { SITUATIONS } from "./situations.ts";

const verdictWord = (v: Verdict | { error: string }): string => ("error" in v ? "error" : v.valid === true ? "valid" : v.valid === false ? "invalid" : "unknown");

export class Coverage {
  cases = 0;
  private readonly rows = new Map<string, Map<string, number>>();

  private count(section: string, row: string): void {
    let s = this.rows.get(section);
    if (!s) this.rows.set(section, (s = new Map()));
    s.set(row, (s.get(row) ?? 0) + 1);
  }

  add(r: CaseResult): void {
    this.cases++;
    const p = r.plan;
    this.count("verdict (fast)", verdictWord(r.fast));
    this.count("verdict (other)", verdictWord(r.other));
    const types = new Set<string>();
    for (const v of [r.fast, r.other]) if (!("error" in v)) for (const t of v.anomaly_types) types.add(t);
    for (const t of types) this.count("anomaly type (either)", t);
    this.count("lock kind", p.lock === "semaphore" ? `semaphore:${p.permits}` : p.lock);
    this.count("format", `format ${p.format}`);
    this.count("workload", p.workload);
    this.count("resource log", `${p.resource}, fencing ${p.fencing ? "on" : "off"}`);
    this.count("fences", p.fences);
    this.count("damage", p.damage);
    const broke = "error" in r.fast ? 0 : r.fast.protocol_errors;
    this.count("adapter", `${p.adapter ?? "none"}${broke ? ", protocol errors recorded" : ""}`);
    this.count("focus", p.focus);
    this.count("defects", p.defects.length === 0 ? "none" : `${Math.min(p.defects.length, 3)}`);
    for (const s of r.situations) this.count("situation", s);
  }

  /** The table, each section's rows in a fixed order (every anomaly type and situation listed, 0 where none came). */
  table(): string {
    const order: Record<string, readonly string[]> = {
      "verdict (fast)": ["valid", "invalid", "unknown", "error"],
      "verdict (other)": ["valid", "invalid", "unknown", "error"],
      "anomaly type (either)": [...ANOMALY_TYPES, ...LIVENESS_TYPES],
      situation: SITUATIONS,
    };
    const lines: string[] = [`coverage of ${this.cases} cases (cases per row; a case counts once per section, in several rows where it has several)`];
    const pct = (n: number): string => (this.cases ? `${((100 * n) / this.cases).toFixed(1)}%` : "-");
    for (const section of ["verdict (fast)", "verdict (other)", "anomaly type (either)", "lock kind", "format", "workload", "resource log", "fences", "defects", "damage", "adapter", "focus", "situation"]) {
      const s = this.rows.get(section) ?? new Map<string, number>();
      const names = order[section] ? [...order[section], ...[...s.keys()].filter((k) => !order[section].includes(k))] : [...s.keys()].sort();
      lines.push(`  ${section}`);
      for (const name of names) {
        const n = s.get(name) ?? 0;
        if (n === 0 && (section.startsWith("verdict") && name === "error")) continue;
        lines.push(`    ${name.padEnd(28)}${String(n).padStart(7)}  ${pct(n).padStart(6)}`);
      }
    }
    return lines.join("\n");
  }
}
