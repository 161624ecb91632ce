// Where an experiment's run is kept: <store>/experiments/<name>/<timestamp>/ with
// results.json (everything measured, and the tables and plots as data), report.html,
// and runs/ holding the test:jepsen runs it made; <store>/experiments/<name>/latest
// points at the newest.
import { mkdirSync, renameSync, symlinkSync, writeFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { runStamp, writeJson } from "../store/index.ts";
import type { Findings } from "./experiment.ts";
import { renderExperimentHtml } from "./page.ts";

export const EXPERIMENT_FILES = { results: "results.json", report: "report.html", runs: "runs" } as const;

export function createExperimentDir(store: string, name: string): { dir: string; started: string } {
  const started = new Date();
  const parent = resolve(store, "experiments", name);
  const dir = join(parent, runStamp(started));
  mkdirSync(join(dir, EXPERIMENT_FILES.runs), { recursive: true });
  const link = join(parent, "latest");
  const tmp = `${link}.${process.pid}`;
  symlinkSync(relative(parent, dir), tmp);
  renameSync(tmp, link);
  return { dir, started: started.toISOString() };
}

export interface ExperimentRecord {
  name: string;
  title: string;
  started: string;
  finished: string;
  quick: boolean;
  command: string;
  options: Record<string, unknown>;
}

export function writeExperiment(dir: string, record: ExperimentRecord, findings: Findings): void {
  writeJson(join(dir, EXPERIMENT_FILES.results), { format: 1, kind: "experiment", ...record, ...findings });
  writeFileSync(join(dir, EXPERIMENT_FILES.report), renderExperimentHtml(record, findings));
}
