// A trace's history written as a run directory (docs/history-format.md), so that
// `fencecheck check` and `fencecheck serve` take it as they take a run.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { writeJson } from "../store/run-dir.ts";
import { HistoryWriter } from "../store/writer.ts";
import type { TraceHistory } from "./to-history.ts";
import type { ClockBounds } from "../checker/index.ts";

/** history.ndjson, resource.ndjson (where the trace has decisions) and run.json, with what the trace lacked under `traces`. */
export function writeTraceRun(runDir: string, history: TraceHistory, about: { test: string; command: string[]; files: string[]; spans: number; clock_error?: ClockBounds }): void {
  mkdirSync(runDir, { recursive: true });
  // As a run's: in (time, arrival) order, numbered from 0.
  const writer = new HistoryWriter(join(runDir, "history.ndjson"), history.header);
  writer.append(history.events);
  const events = writer.finish();
  if (history.resource) writeFileSync(join(runDir, "resource.ndjson"), history.resource.map((l) => JSON.stringify(l) + "\n").join(""));
  writeJson(join(runDir, "run.json"), {
    test: about.test,
    started: new Date().toISOString(),
    run_dir: runDir,
    command: about.command,
    options: { backend: "traces", workload: "fenced-write", model: "lease" },
    // Sampling and lost spans leave operations out: the checkers prove nothing from an operation's absence.
    history_complete: false,
    traces: { files: about.files, spans: about.spans, gaps: history.gaps, processes: history.processes },
    events: events.length,
    // How far each process's clock may be off: the checkers read it (checker/clock.ts).
    ...(about.clock_error ? { clock_error: about.clock_error } : {}),
  });
}
