// Which worker process each history process ran in: run.json's `processes`
// (docs/history-format.md). The history names processes by number and the
// nemesis names workers and links by name; this is what joins the two, so that a
// witness can say that the holder it names was frozen, and a report can put each
// lane in its worker. history.ndjson's format stays as it was: the map is a fact
// about how the run was made, recorded beside it.
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { RUN_FILES, type HistoryEvent } from "./events.ts";

/** Where one history process ran: its worker, and the logical client it was a process of. */
export interface ProcessPlace {
  worker: string;
  client: number;
}

/** run.json `processes`: by process number (as a string, JSON's keys being strings). */
export type ProcessMap = Record<string, ProcessPlace>;

/** The runner's name for its n-th worker (from 1), as logs/, run.json and the nemesis's targets name it. */
export const workerName = (n: number): string => `worker-${n}`;

/** A link between a worker and a server as the nemesis's targets name it: `worker-1->redis-1`. */
export const linkTarget = (worker: string, server: string): string => `${worker}->${server}`;

/** The worker a link target starts from (null: the target is not a link). */
export function linkWorker(target: string): string | null {
  const at = target.indexOf("->");
  return at > 0 ? target.slice(0, at) : null;
}

/**
 * Whether a fault's target is a worker: one the run recorded, or, for a run that
 * recorded none, a name of the runner's making.
 */
export const isWorker = (target: string, workers: ReadonlySet<string>): boolean => workers.has(target) || /^worker-\d+$/.test(target);

/**
 * Records, as a run's events arrive from each worker, which worker sent each
 * process's events: what the worker ran, not what a rule says it should have.
 */
export class ProcessMapRecorder {
  private readonly places = new Map<number, ProcessPlace>();

  /** `clientOf`: the logical client a process number belongs to (workloads/client.ts replaces a retired process by process + concurrency). */
  constructor(private readonly clientOf: (process: number) => number) {}

  observe(worker: string, events: ReadonlyArray<Pick<HistoryEvent, "process">>): void {
    for (const e of events) {
      if (typeof e.process === "number" && !this.places.has(e.process)) this.places.set(e.process, { worker, client: this.clientOf(e.process) });
    }
  }

  /** In process order, for run.json. */
  toJSON(): ProcessMap {
    return Object.fromEntries([...this.places].sort(([a], [b]) => a - b).map(([p, place]) => [String(p), place]));
  }
}

/**
 * run.json's `processes`, read without trusting it: null when the run has none (a
 * run from before it was recorded, or a history from a harness of one's own);
 * entries that are not `{worker, client}` are left out, with a warning.
 */
export function processMapOf(info: Record<string, unknown> | null, warnings: string[] = []): ProcessMap | null {
  const raw = info?.processes;
  if (raw === undefined) return null;
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    warnings.push(`run.json: "processes" is not an object; processes are not matched to workers`);
    return null;
  }
  const map: ProcessMap = {};
  let bad = 0;
  for (const [p, v] of Object.entries(raw as Record<string, unknown>)) {
    const place = v as Partial<ProcessPlace> | null;
    if (/^\d+$/.test(p) && typeof place === "object" && place !== null && typeof place.worker === "string" && Number.isSafeInteger(place.client)) map[p] = { worker: place.worker, client: place.client! };
    else bad++;
  }
  if (bad > 0) warnings.push(`run.json: ${bad} entries of "processes" are not a process number with {"worker", "client"}; left out`);
  return map;
}

/** The map of the run directory's run.json (null: no run.json, not an object, or no map in it). */
export async function readProcessMap(runDir: string): Promise<ProcessMap | null> {
  let info: unknown;
  try {
    info = JSON.parse(await readFile(join(runDir, RUN_FILES.run), "utf8"));
  } catch {
    // No run.json, or one that is not JSON: the check has said so; the page says there is no map.
    return null;
  }
  return typeof info === "object" && info !== null && !Array.isArray(info) ? processMapOf(info as Record<string, unknown>) : null;
}

/** What to say where a run has no map. */
export const NO_PROCESS_MAP = "run.json has no \"processes\" map (the run predates it, or was not made by fencecheck test)";
