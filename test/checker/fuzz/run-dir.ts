// A fuzz case on disk: the run directory a checker reads (history.ndjson,
// resource.ndjson, run.json), in a temporary directory of its own that the caller
// removes. The files are what the runner writes, and what a killed run leaves when
// the Plan says so: a last line cut short (history or resource log), a last line
// whole but without its newline, or a killed run's history with lines out of time
// order as the workers' batches arrived.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execute, type Execution } from "./execute.ts";
import type { Plan } from "./plan.ts";

const MS = 1e6;

/** The first `cutAt` thousandths of a line that would have come next, never all of it: not valid JSON. */
function cutShort(line: string, cutAt: number): string {
  return line.slice(0, Math.min(line.length - 1, Math.max(1, Math.floor((line.length * cutAt) / 1000))));
}

/** A killed run's lines: some neighbours swapped, as batches from two workers arrive in either order. */
function outOfOrder(lines: string[], cutAt: number): string[] {
  const out = [...lines];
  for (let i = 0; i + 1 < out.length; i += 2) if ((Math.imul(i + 1, 0x9e3779b1) ^ cutAt) % 3 === 0) [out[i], out[i + 1]] = [out[i + 1], out[i]];
  return out;
}

export interface RunFiles {
  history: string;
  resource: string | null;
  run: string | null;
  /** protocol-errors.ndjson; null: none (no adapter broke the protocol). */
  protocolErrors: string | null;
}

/** The files' contents. */
export function runFiles(plan: Plan, x: Execution, id: string): RunFiles {
  let events = x.events.map((e) => JSON.stringify(e));
  const killed = plan.damage === "killed";
  if (killed) events = outOfOrder(events, plan.cutAt);
  let history = [JSON.stringify(x.header), ...events].join("\n") + "\n";
  if (plan.damage === "cut-history" || killed) {
    const next = { index: x.events.length, time: x.end + MS, process: 0, type: "invoke", f: "write", key: "k0", value: { owner: "c0-h99", fence: 99, data: "c0-h99#1" } };
    history += cutShort(JSON.stringify(next), plan.cutAt);
  }
  if (plan.damage === "no-newline") history = history.slice(0, -1);
  let resource: string | null = null;
  if (x.decisions) {
    resource = x.decisions.map((d) => JSON.stringify(d) + "\n").join("");
    if (plan.damage === "cut-resource") {
      const next = { seq: x.decisions.length + 1, time: x.end + MS, op: "write", key: "k0", process: 0, owner: "c0-h99", fence: 99, max_before: null, accepted: true, data: "c0-h99#1", fencing: plan.fencing };
      resource += cutShort(JSON.stringify(next), plan.cutAt);
    }
  }
  let run: string | null = null;
  if (plan.runJson !== "none") {
    const options: Record<string, unknown> = { model: "lease", liveness: plan.liveness };
    if (plan.runJson === "timeouts") Object.assign(options, { workload: plan.workload, workloadOptions: { ttlMs: plan.ttlMs }, commandTimeoutMs: plan.ttlMs });
    const clock = plan.clockErrorMs > 0 ? { clock_error: { default_ms: plan.clockErrorMs, by_process: plan.clockErrorOfFirst === null ? {} : { "0": plan.clockErrorOfFirst } } } : {};
    const info = { test: `fuzz-${plan.workload}`, seed: id, started: "2026-11-29T00:00:00.000Z", ...(killed ? {} : { finished: "2026-11-29T00:00:10.000Z" }), options, ...clock, ...(plan.historyIncomplete ? { history_complete: false } : {}) };
    run = JSON.stringify(info, null, 2) + "\n";
  }
  // A killed run's last protocol error may be cut short too: it still counts.
  let protocolErrors: string | null = x.protocolErrors.length ? x.protocolErrors.map((e) => JSON.stringify(e) + "\n").join("") : null;
  if (protocolErrors && killed) protocolErrors = protocolErrors.slice(0, -1 - Math.floor((JSON.stringify(x.protocolErrors.at(-1)).length * plan.cutAt) / 2000));
  return { history, resource, run, protocolErrors };
}

/** Writes a case into `dir` (made if missing). */
export function writeRunDir(dir: string, files: RunFiles): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "history.ndjson"), files.history);
  if (files.resource !== null) writeFileSync(join(dir, "resource.ndjson"), files.resource);
  if (files.run !== null) writeFileSync(join(dir, "run.json"), files.run);
  if (files.protocolErrors !== null) writeFileSync(join(dir, "protocol-errors.ndjson"), files.protocolErrors);
}

/** A case in a fresh temporary run directory; `remove` takes it away. */
export function tempRun(plan: Plan, id = "case"): { dir: string; execution: Execution; remove: () => void } {
  const execution = execute(plan, id);
  const dir = mkdtempSync(join(tmpdir(), "fencecheck-fuzz-"));
  writeRunDir(dir, runFiles(plan, execution, id));
  return { dir, execution, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
