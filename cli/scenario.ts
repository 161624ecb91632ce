// `fencecheck scenario <id> [options]` (in the checkout also `npm run scenario --`):
// one scenario of the failure catalogue, run deterministically (chosen faults at
// chosen moments against chosen clients), then checked like any test run; exits
// with the checker's verdict.
// `fencecheck scenario --list`: each scenario with what it shows and why.
import { BadInput, EXIT, didYouMean, namesTypeScript, rerunWithTypeScript } from "../lib/index.ts";
import type { ScriptStep } from "../nemesis/index.ts";
import { SCENARIOS, FREE_OPTIONS, buildScenario, commandLine, listing, matches, scriptOf, type Scenario, type ScenarioRun } from "../scenarios/index.ts";
import { runAndCheck } from "./run-and-check.ts";
import { ensureFor } from "../runner/index.ts";
import { preflight } from "../runner/index.ts";

const USAGE = `Usage: fencecheck scenario <id> [options]
       fencecheck scenario <id> --help     what it runs, and the options it takes
       fencecheck scenario --list

Runs one scenario of the failure catalogue (docs/experiments.md) against real servers:
the test options that reproduce it, with chosen faults at chosen moments
in place of random ones. Records, checks and reports the run as fencecheck test does
(--store, --seed, ... work the same), says whether the checker found what the
catalogue predicts, and exits with the checker's verdict.
Exit: 0 valid, 1 invalid, 2 unknown, 254 bad arguments, 255 the tool failed.`;

function describeStep(step: ScriptStep): string {
  const f = step.fault;
  const at = step.atMs <= 0 ? "before the clients start" : `at ${step.atMs} ms`;
  const until = f.durationMs === null ? "until the end of the run" : `for ${f.durationMs} ms`;
  const targets = f.targets.join(", ");
  switch (step.nemesis) {
    case "clock":
      return `${at}: move ${targets}'s clock ${f.offsetMs! > 0 ? "+" : ""}${f.offsetMs} ms (${f.mode ?? "bump"}) ${until}`;
    case "kill":
      return `${at}: SIGKILL ${targets}, ${f.durationMs === null ? "restarted at the end of the run" : `restarted ${f.durationMs} ms later`}`;
    case "latency":
      return `${at}: ${f.latencyMs} ms of latency each way on ${targets} ${until}`;
    case "partition":
      return `${at}: cut ${targets} ${until}`;
    default:
      return `${at}: ${step.nemesis} ${targets} ${until}`;
  }
}

const expected = (a: string[] | null): string => (a === null ? "no firm call" : a.length === 0 ? "valid" : a.join(", "));

function header(run: ScenarioRun): string {
  const { scenario: s, prediction: p } = run;
  const script = scriptOf(s, run.options);
  return [
    `Scenario ${s.id}: ${s.title}`,
    `  ${s.shows}`,
    `  test options: ${commandLine(run)}`,
    script.length ? `  faults, from the clients' start:\n${script.map((st) => `    ${describeStep(st)}`).join("\n")}` : "  faults: none (the clients' own options make the scenario)",
    `  the catalogue predicts: ${expected(p.anomalies)} (${p.why})`,
  ].join("\n");
}

function describe(s: Scenario): string {
  const run = buildScenario(s, []);
  const opts = (o: Record<string, string>) => Object.entries(o).map(([n, why]) => `  --${n.padEnd(22)} ${why}`).join("\n");
  return `${header(run)}\n\nOptions it takes (every other option of fencecheck test is fixed):\n${opts(s.varies)}\n${opts(FREE_OPTIONS)}\n`;
}

export async function main(argv: string[]): Promise<number> {
  // A client adapter in TypeScript needs tsx's loader, which the built command lacks (as for `fencecheck test`).
  const rerun = rerunWithTypeScript(namesTypeScript(argv, "client"));
  if (rerun) return rerun;
  if (argv[0] === "--list" && argv.length === 1) {
    process.stdout.write(listing() + "\n");
    return EXIT.valid;
  }
  if (argv.length === 0 || argv[0] === "--help" || argv[0] === "-h") {
    (argv.length ? process.stdout : process.stderr).write(`${USAGE}\n\nScenarios:\n${listing()}\n`);
    return argv.length ? EXIT.valid : EXIT.badInput;
  }
  const [id, ...rest] = argv;
  const scenario = SCENARIOS[id.toUpperCase()];
  if (id.startsWith("-")) throw new BadInput(`the scenario id comes first, before ${id} (scenarios: ${Object.keys(SCENARIOS).join(", ")})`);
  if (!scenario) throw new BadInput(`unknown scenario ${JSON.stringify(id)}${didYouMean(id.toUpperCase(), Object.keys(SCENARIOS))} (scenarios: ${Object.keys(SCENARIOS).join(", ")}; fencecheck scenario --list)`);
  if (rest.length === 1 && (rest[0] === "--help" || rest[0] === "-h")) {
    process.stdout.write(describe(scenario));
    return EXIT.valid;
  }
  const run: ScenarioRun = buildScenario(scenario, rest);
  await ensureFor(run.test);
  await preflight(run.test);
  process.stdout.write(header(run) + "\n");
  const { code, results } = await runAndCheck(run.test);
  if (results) process.stdout.write(verdictLine(run, results) + "\n");
  return code;
}

function verdictLine(run: ScenarioRun, results: { valid: boolean | "unknown"; anomaly_types: string[] }): string {
  const found = results.valid === true ? "valid" : results.valid === "unknown" ? "unknown" : results.anomaly_types.join(", ");
  const m = matches(run.prediction.anomalies, results);
  if (m === null) return `Scenario ${run.scenario.id}: found ${found}; the catalogue makes no firm call for these options.`;
  return m
    ? `Scenario ${run.scenario.id}: found ${found}, as the catalogue predicts.`
    : `Scenario ${run.scenario.id}: found ${found}, NOT what the catalogue predicts (${expected(run.prediction.anomalies)}).`;
}

