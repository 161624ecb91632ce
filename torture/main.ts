// `npm run torture -- --trials N [--seed S] [--store DIR] [--only WAYS]`: kill
// real runs the ways users and CI kill them, at random moments, and find out
// whether anything is left behind (docs/ci.md, "fencecheck's own crash safety"). It is a
// script of the checkout, beside the benchmarks, and not a `fencecheck`
// subcommand: it tests fencecheck itself (through `npm run test:jepsen` among
// others), which is nothing a user of the package runs.
//
// One line per trial, then "N of M clean". Exit 0 when every trial was clean,
// 1 otherwise, 254 on bad options, 130 when interrupted.
import { mkdtempSync, mkdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { BadInput, EXIT, commandOptions, type OptionSpec } from "../lib/index.ts";
import { benchCommand } from "../bench/command.ts";
import { ALL, DEPLOYS, KILL_WAYS, planTrial, usableBackends, type Deploy, type KillWay, type PlanLimits } from "./plan.ts";
import { ACTIVE, runTrial, trialLines } from "./trial.ts";

const USAGE = [
  "usage: npm run torture -- [options]",
  "",
  "Each trial starts a run (a backend, local or in containers, a nemesis), kills it",
  "one way (SIGKILL of the runner, Ctrl-C, SIGKILL of npm's process group, of the",
  "runner and its reaper, of a soak, of the resource's Postgres) at a random moment",
  "(start-up, operations, teardown), starts the next run, and then looks for what",
  "the killed run left: processes, containers, networks, directories; and checks",
  "its run directory with `fencecheck check`. Exit: 0 every trial clean, 1 not,",
  "254 bad options.",
].join("\n");

const OPTIONS: readonly OptionSpec[] = [
  { name: "trials", kind: "int", default: 10, min: 1, help: "trials to run" },
  { name: "seed", kind: "int", default: undefined, min: 0, defaultText: "random, printed", help: "the same seed gives the same trials" },
  { name: "store", kind: "string", default: undefined, defaultText: "a temporary directory, removed when every trial was clean", help: "where the trials' runs are stored (trial-N/ each)" },
  { name: "only", kind: "list", default: [...KILL_WAYS], choices: KILL_WAYS, help: "kill ways to use" },
  { name: "backends", kind: "list", default: [...ALL.backends], choices: ALL.backends, help: "backends to draw from" },
  { name: "deploys", kind: "list", default: [...DEPLOYS], choices: DEPLOYS, help: "deployments to draw from (docker: the backends that run in containers, one trial in four where local is allowed too)" },
];

function limits(o: Record<string, unknown>): PlanLimits {
  const l: PlanLimits = { ways: o.only as KillWay[], backends: o.backends as string[], deploys: o.deploys as Deploy[] };
  if (usableBackends(l).length === 0) throw new BadInput(`--backends ${l.backends.join(",")} has none that runs with --deploys ${l.deploys.join(",")}`);
  return l;
}

/** The options, or null for --help; BadInput for bad ones. */
function parse(argv: string[]): { o: Record<string, unknown>; lim: PlanLimits } | null {
  const o = commandOptions(argv, OPTIONS, USAGE);
  return o ? { o, lim: limits(o) } : null;
}

async function main({ o, lim }: { o: Record<string, unknown>; lim: PlanLimits }): Promise<number> {
  const trials = o.trials as number;
  const seed = (o.seed as number | undefined) ?? Math.floor(Math.random() * 2 ** 31);
  const ownStore = o.store === undefined;
  const store = ownStore ? mkdtempSync(join(tmpdir(), "fencecheck-torture-")) : resolve(o.store as string);
  mkdirSync(store, { recursive: true });
  process.stdout.write(`torture: ${trials} trials, seed ${seed}, store ${store}\n`);
  let clean = 0;
  for (let n = 1; n <= trials; n++) {
    const result = await runTrial(planTrial(seed, n, lim), join(store, `trial-${n}`));
    if (result.problems.length === 0) clean++;
    process.stdout.write(`${trialLines(result, trials)}\n`);
  }
  process.stdout.write(`${clean} of ${trials} clean\n`);
  if (ownStore && clean === trials) rmSync(store, { recursive: true, force: true });
  else process.stdout.write(`The trials' runs and outputs are in ${store}\n`);
  return clean === trials ? EXIT.valid : EXIT.invalid;
}

// Stopped itself (Ctrl-C), the torture takes its trials' processes with it.
for (const sig of ["SIGINT", "SIGTERM"] as const)
  process.on(sig, () => {
    for (const tree of ACTIVE) tree.killAlive();
    process.exit(130);
  });

// A torture that fails takes its trials' processes with it too.
benchCommand("torture", parse, (args) => main(args).finally(() => ACTIVE.forEach((tree) => tree.killAlive())));
