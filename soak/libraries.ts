// The library table: a soak's configurations grouped by lock client, one row per
// client, saying which anomalies showed with fencing off and whether fencing on
// made every run valid. It is printed below the per-configuration table whenever a
// client was run both ways (the `libraries` preset does it for every client).
import { plain } from "../reports/index.ts";
import type { ConfigSummary } from "./summary.ts";
import { TEST_OPTIONS } from "../runner/index.ts";

/** Whether a configuration runs with fencing on (the default). */
export const fenced = (c: Pick<ConfigSummary, "options">): boolean => {
  const f = c.options?.fence;
  return f === undefined || f === true || f === "on";
};

/**
 * A configuration built to break the lock (a kill without persistence, a clock
 * jump, an unsafe release), expected to find an anomaly: it says nothing of
 * whether fencing makes the client safe, so it stays off the fencing-on side.
 */
const breaksOnPurpose = (c: ConfigSummary): boolean => c.expect.kind === "find";

/** An option's value in a configuration, or what `fencecheck test` takes without it. */
const optionOf = (c: Pick<ConfigSummary, "options">, name: string): unknown => c.options?.[name] ?? TEST_OPTIONS.find((o) => o.name === name)?.default;
const clientOf = (c: ConfigSummary): string => String(c.options?.client ?? `${optionOf(c, "backend")} (default client)`);
/** The faults a configuration injects, as its rows name them: "pause", "partition,pause", "clock (clients)" for a clock moved on the clients. */
export const faultName = (options: Record<string, unknown> | undefined, nemesis: unknown): string =>
  `${String(nemesis)}${options?.["clock-target"] === "clients" ? " (clients)" : ""}`;
/** The faults a configuration injects, the test command's default nemesis when it names none. */
export const faultOf = (c: Pick<ConfigSummary, "options">): string => faultName(c.options, optionOf(c, "nemesis"));
const checked = (c: ConfigSummary): number => c.counts.valid + c.counts.invalid + c.counts.unknown;

export interface LibraryRow {
  client: string;
  faults: string[];
  /** Anomaly type -> the faults under which it showed, with runs found/checked. */
  unfenced: Record<string, string[]>;
  unfencedRuns: number;
  /** Fencing on: runs checked, valid, with a stale write refused; anomalies by type as above. */
  fencedRuns: number;
  fencedValid: number;
  refused: number;
  fencedAnomalies: Record<string, string[]>;
  /** Whether the library tells its user it lost the lock (adapter programs' runs only; null: its runs cannot tell). */
  tells: { holds: number; told: number; medianMs: number | null } | null;
  /** A lock with no fence to take (no fence of its own, no counter on its backend): it runs with fencing off only. */
  fenceless?: boolean;
}

export function libraryRows(configs: ConfigSummary[], fenceless: (client: string) => boolean = () => false): LibraryRow[] {
  const byClient = new Map<string, ConfigSummary[]>();
  for (const c of configs) byClient.set(clientOf(c), [...(byClient.get(clientOf(c)) ?? []), c]);
  const rows: LibraryRow[] = [];
  for (const [client, cs] of byClient) {
    const on = cs.filter((c) => fenced(c) && !breaksOnPurpose(c));
    const off = cs.filter((c) => !fenced(c));
    const offOnly = fenceless(client) && cs.every((c) => !fenced(c));
    if ((on.length === 0 && !offOnly) || off.length === 0) continue;
    const found = (list: ConfigSummary[]): Record<string, string[]> => {
      const out: Record<string, string[]> = {};
      for (const c of list) for (const [t, n] of Object.entries(c.anomalies)) (out[t] ??= []).push(`${faultOf(c)} ${n}/${checked(c)}`);
      return out;
    };
    rows.push({
      client,
      faults: [...new Set([...on, ...off].map(faultOf))],
      unfenced: found(off),
      unfencedRuns: off.reduce((s, c) => s + checked(c), 0),
      fencedRuns: on.reduce((s, c) => s + checked(c), 0),
      fencedValid: on.reduce((s, c) => s + c.counts.valid, 0),
      refused: on.reduce((s, c) => s + (c.exercised?.refused ?? 0), 0),
      fencedAnomalies: found(on),
      tells: tellsOf(cs),
      ...(offOnly ? { fenceless: true } : {}),
    });
  }
  return rows;
}

/** Over every configuration of a client whose runs can tell: holds lost, told, and the median of the configurations' median delays. */
function tellsOf(cs: ConfigSummary[]): LibraryRow["tells"] {
  const l = cs.flatMap((c) => (c.lost_holds ? [c.lost_holds] : []));
  if (l.length === 0) return null;
  const delays = l.flatMap((x) => (x.told_after_p50_ms === null ? [] : [x.told_after_p50_ms])).sort((a, b) => a - b);
  return { holds: l.reduce((s, x) => s + x.holds, 0), told: l.reduce((s, x) => s + x.told, 0), medianMs: delays.length ? delays[(delays.length - 1) >> 1] : null };
}

/** "Tells you it lost the lock": yes (how many of the lost holds, and how soon at the median), no, or not known. */
export function tellsText(r: LibraryRow): string {
  const t = r.tells;
  if (!t) return "-";
  if (t.holds === 0) return "no hold lost";
  if (t.told === 0) return `no (0 of ${t.holds} lost holds)`;
  return `yes, ${t.told} of ${t.holds} lost holds${t.medianMs === null ? "" : `, median ${Math.round(t.medianMs)} ms after`}`;
}

const anomalyText = (found: Record<string, string[]>): string =>
  Object.entries(found).map(([t, where]) => `${t} (${where.join(", ")})`).join("; ") || "none";

/** What the resource sees: with fencing on, these are what fencing is there to stop. */
const RESOURCE_ANOMALIES = new Set(["stale-write-accepted", "interleaved-writers", "lost-update", "false-rejection"]);

/**
 * Fencing on: safe when every run was valid; "resource safe" when the only
 * anomalies left are the lock's own (a spent lease handed over, a lost lock
 * renewed): fencing kept the data right, the lock still broke its promise.
 */
export function fencingText(r: LibraryRow): string {
  if (r.fenceless) return "none: the lock issues no fence and its backend has no counter to take one from (fencing off only)";
  if (r.fencedRuns === 0) return "not run";
  if (r.fencedValid === r.fencedRuns) return `safe: ${r.fencedValid}/${r.fencedRuns} runs valid, a stale write refused in ${r.refused}`;
  const types = Object.keys(r.fencedAnomalies);
  if (types.every((t) => !RESOURCE_ANOMALIES.has(t)))
    return `resource safe (no write anomaly in ${r.fencedRuns} runs, a stale write refused in ${r.refused}), but the lock still shows ${anomalyText(r.fencedAnomalies)}`;
  return `NOT safe: ${anomalyText(r.fencedAnomalies)}; ${r.fencedValid}/${r.fencedRuns} runs valid`;
}

/** The table for the terminal, or nothing when no client ran both with and without fencing. */
export function renderLibraryTable(configs: ConfigSummary[]): string[] {
  const rows = libraryRows(configs);
  if (rows.length === 0) return [];
  const lines = ["", "By lock client (fencing off: anomalies, under which fault in how many runs; fencing on: whether every run was valid, leaving out configurations that break the lock on purpose):"];
  for (const r of rows) {
    lines.push(`  ${plain(r.client)}  [${r.faults.map(plain).join(", ")}]`);
    lines.push(`    fencing off: ${plain(anomalyText(r.unfenced))} (${r.unfencedRuns} runs)`);
    lines.push(`    fencing on:  ${plain(fencingText(r))}`);
    if (r.tells) lines.push(`    tells you it lost the lock: ${plain(tellsText(r))}`);
  }
  return lines;
}

/** The same as a Markdown table, for docs/measurements.md. */
export function libraryMarkdown(configs: ConfigSummary[]): string[] {
  const rows = libraryRows(configs);
  return [
    "| client | faults | fencing off: anomalies (fault found/runs) | fencing on | tells you it lost the lock |",
    "| --- | --- | --- | --- | --- |",
    ...rows.map((r) => `| ${r.client} | ${r.faults.join(", ")} | ${anomalyText(r.unfenced)} | ${fencingText(r)} | ${tellsText(r)} |`),
  ];
}
