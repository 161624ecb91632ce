// The container engine the docker tests run on: the same search as --deploy docker.
// Where none answers, each docker test file says so in one visible line and its
// tests count as skipped, never as passed.
import { join } from "node:path";
import { readFileSync, realpathSync } from "node:fs";
import { findEngine, listContainers, type Engine } from "../../docker/index.ts";
import { latestRun, readNdjson } from "../helpers.ts";

/** A short run's options, after --deploy docker and before each test's own. */
export const SHORT_RUN = ["--concurrency", "4", "--workers", "2", "--seed", "5"];

/** The newest run of a store: its directory, history events (the header left out), run.json and results.json. */
export function loadRun(store: string) {
  const dir = realpathSync(latestRun(store));
  return {
    dir,
    events: readNdjson(join(dir, "history.ndjson")).slice(1),
    run: JSON.parse(readFileSync(join(dir, "run.json"), "utf8")),
    results: JSON.parse(readFileSync(join(dir, "results.json"), "utf8")),
  };
}

export async function engineOrSkip(file: string): Promise<Engine | null> {
  try {
    return await findEngine();
  } catch (err) {
    console.warn(`SKIPPED ${file}: ${(err as Error).message}`);
    return null;
  }
}

/** Containers and networks of fencecheck runs the engine holds now (any state). */
export async function fencecheckObjects(engine: Engine, run?: string): Promise<{ containers: string[]; running: string[]; networks: string[] }> {
  const label = run ? [`fencecheck.run=${run}`] : ["fencecheck.owner"];
  const filters = JSON.stringify({ label });
  const containers = await listContainers(engine.docker, { all: true, filters });
  const networks = await engine.docker.listNetworks({ filters });
  return {
    containers: containers.map((c) => c.Names[0]),
    running: containers.filter((c) => c.State === "running" || c.State === "paused").map((c) => c.Names[0]),
    networks: networks.map((n) => n.Name),
  };
}
