// A trace's history written as a run directory (docs/history-format.md), so that
// `fencecheck check` and `fencecheck serve` take it as they take a run.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { writeJson } from "../store/run-dir.ts";
import type { TraceHistory } from "./to-history.ts";

/** history.ndjson, resource.ndjson (where the trace has decisions) and run.json, with what the trace lacked under `traces`. */
export function writeTraceRun(runDir: string, history: TraceHistory, about: { test: string; command: string[]; files: string[]; spans: number }): void {
  mkdirSync(runDir, { recursive: true });
  writeFileSync(join(runDir, "history.ndjson"), [history.header, ...history.events].map((e) => JSON.stringify(e)).join("\n") + "\n");
  if (history.resource) writeFileSync(join(runDir, "resource.ndjson"), history.resource.map((l) => JSON.stringify(l) + "\n").join(""));
  writeJson(join(runDir, "run.json"), {
    test: about.test,
    started: new Date().toISOString(),
    run_dir: runDir,
    command: about.command,
    options: { backend: "traces", workload: "fenced-write", model: "lease" },
    traces: { files: about.files, spans: about.spans, gaps: history.gaps, processes: history.processes },
    events: history.events.length,
  });
}
