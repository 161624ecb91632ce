// What each trial of the torture does, drawn from the seed and the trial's
// number alone: the same --seed replays the same trials, and trial 7 is the
// same whether or not trials 1 to 6 ran. Ways and backends go round in an
// order the seed shuffles, so a few trials already cover every kill way and
// every backend; the rest (deployment, nemesis, moment) is drawn per trial.
import { rng, shuffled } from "../lib/random.ts";
import { BACKEND_NAMES, backendNamed } from "../backends/index.ts";
import { NEMESES, type NemesisKind } from "../nemesis/index.ts";

/**
 * How a run is killed, as a user, a CI time-out or a crash does it:
 * - kill-runner: SIGKILL of the `fencecheck test` process;
 * - ctrl-c: SIGINT to the process group of `npm run test:jepsen` (a terminal's Ctrl-C);
 * - kill-npm-group: SIGKILL of that whole process group (a CI job's time-out);
 * - kill-runner-and-reaper: SIGKILL of the runner and of its reaper (cluster/reaper.ts) together;
 * - kill-soak: SIGKILL of a `fencecheck soak` while its runs go;
 * - kill-resource-db: SIGKILL of the resource's own Postgres (--resource postgres) mid-writes.
 */
export const KILL_WAYS = ["kill-runner", "ctrl-c", "kill-npm-group", "kill-runner-and-reaper", "kill-soak", "kill-resource-db"] as const;
export type KillWay = (typeof KILL_WAYS)[number];

/** When the kill lands: while servers start, while clients operate, or after the time limit (heal, grace, teardown, check). */
export const MOMENTS = ["start-up", "operations", "teardown"] as const;
export type Moment = (typeof MOMENTS)[number];

export const DEPLOYS = ["local", "docker"] as const;
export type Deploy = (typeof DEPLOYS)[number];

/** Docker runs take several times a local one's start, so where both are allowed about one trial in four is docker. */
const DOCKER_SHARE = 0.25;

export interface TrialPlan {
  trial: number;
  backend: string;
  deploy: Deploy;
  nemesis: string;
  way: KillWay;
  moment: Moment;
  /** Where in the moment the kill lands, from 0 (its start) to 1 (its end). */
  at: number;
  /** --time-limit of the run, in seconds. */
  timeLimit: number;
  /** --seed of the run (or of the soak). */
  seed: number;
}

export interface PlanLimits {
  backends: readonly string[];
  deploys: readonly Deploy[];
  ways: readonly KillWay[];
}

export const ALL: PlanLimits = { backends: [...BACKEND_NAMES], deploys: DEPLOYS, ways: KILL_WAYS };

const canDocker = (backend: string): boolean => !backendNamed(backend)?.cannot?.docker;

/** The backends a trial may draw from: those that can run in one of the allowed deployments. */
export function usableBackends(limits: PlanLimits): string[] {
  return limits.backends.filter((b) => limits.deploys.includes("local") || canDocker(b));
}

/** The nemeses a backend's run takes there: every one but those needing an ability it lacks. */
export function nemesesFor(backend: string): string[] {
  const abilities: readonly string[] = backendNamed(backend)?.abilities ?? [];
  return ["none", ...Object.entries(NEMESES as Record<string, NemesisKind>).filter(([, n]) => !n.needs || abilities.includes(n.needs)).map(([name]) => name)];
}

/** Trial `trial` (from 1) of a torture with `seed`. */
export function planTrial(seed: number, trial: number, limits: PlanLimits = ALL): TrialPlan {
  const backends = usableBackends(limits);
  if (backends.length === 0 || limits.ways.length === 0) throw new Error("no backend or no kill way to draw from");
  const way = shuffled(rng(seed, "torture-ways"), limits.ways)[(trial - 1) % limits.ways.length];
  const backend = shuffled(rng(seed, "torture-backends"), backends)[(trial - 1) % backends.length];
  const r = rng(seed, "torture-trial", trial);
  const docker = canDocker(backend) && limits.deploys.includes("docker") && (!limits.deploys.includes("local") || r.next() < DOCKER_SHARE);
  const deploy: Deploy = docker ? "docker" : "local";
  return {
    trial,
    backend,
    deploy,
    nemesis: r.pick(nemesesFor(backend)),
    way,
    // The resource's store is killed mid-writes, which is what that way is about.
    moment: way === "kill-resource-db" ? "operations" : r.pick(MOMENTS),
    at: Math.round(r.next() * 100) / 100,
    timeLimit: r.int(deploy === "docker" ? 3 : 2, 5),
    seed: r.int(1, 2 ** 31 - 1),
  };
}
