// A scenario plus the user's options -> a Test, through test:jepsen's own
// buildTest, so a scenario's run is a test:jepsen run with a script in place of
// the random nemesis. The user may set what does not move a fault or a client
// (the store, the seed, ...) and what the scenario lists as its variations;
// anything else would make it a different experiment, and is refused.
import { BadInput, parseArgs, type ParsedOptions } from "../lib/index.ts";
import { TEST_OPTIONS, buildTest, type Test } from "../runner/index.ts";
import { scriptNemeses } from "../nemesis/index.ts";
import { isAdapterPath } from "../clients/adapter.ts";
import { FREE_OPTIONS, scriptOf, type Prediction, type Scenario } from "../core/scenario.ts";

export interface ScenarioRun {
  scenario: Scenario;
  test: Test;
  /** The final test:jepsen options (for the header a run prints). */
  options: ParsedOptions;
  /** Only the options the user gave. */
  given: ParsedOptions;
  prediction: Prediction;
}

/** The options the user gave, and only those (no defaults filled in). */
export function givenOptions(argv: string[]): ParsedOptions {
  const specs = TEST_OPTIONS.map((s) => ({ ...s, default: undefined, required: false }));
  const { options, positional } = parseArgs(argv, specs);
  if (positional.length) throw new BadInput(`unexpected argument ${JSON.stringify(positional[0])} (one scenario id, then options starting with --)`);
  return Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined));
}

export function buildScenario(scenario: Scenario, argv: string[]): ScenarioRun {
  const given = givenOptions(argv);
  const allowed = { ...FREE_OPTIONS, ...scenario.varies };
  for (const name of Object.keys(given))
    if (!(name in allowed))
      throw new BadInput(
        `--${name} is fixed by scenario ${scenario.id}: changing it would move its faults or its clients off the moments that reproduce it. ` +
          `Options it takes: ${Object.keys(allowed).map((n) => `--${n}`).join(", ")} (or run fencecheck test with any options)`,
      );
  const defaults = parseArgs([], TEST_OPTIONS).options;
  const options: ParsedOptions = { ...defaults, ...scenario.options, ...given };
  scenario.fit?.(options);
  const script = scriptOf(scenario, options);
  const nemeses = scriptNemeses(script);
  // buildTest checks the backend can do what the script needs, and starts clocks that can be moved if it moves one.
  options.nemesis = nemeses.length ? nemeses : ["none"];
  const test = buildTest(options);
  test.name = `${scenario.id.toLowerCase()}-${test.name}`;
  test.script = script;
  // The catalogue speaks of the shipped clients: of a lock of the user's it can say nothing in advance.
  const prediction: Prediction = isAdapterPath(test.client)
    ? { anomalies: null, why: `the catalogue predicts for the shipped clients, and ${test.client} is yours: its verdict is the finding; run the scenario without --client for the catalogue's` }
    : scenario.predict(options);
  return { scenario, test, options, given, prediction };
}

/** The scenario as one test:jepsen command line: its options, without the script. */
export function commandLine(run: ScenarioRun): string {
  const defaults = parseArgs([], TEST_OPTIONS).options;
  const parts: string[] = [];
  for (const spec of TEST_OPTIONS) {
    const v = run.options[spec.name];
    // A script takes the random nemesis's place; without one, the run has none.
    if (spec.name === "nemesis" && run.test.script?.length) continue;
    if (v === undefined || JSON.stringify(v) === JSON.stringify(defaults[spec.name])) continue;
    const text = Array.isArray(v) ? v.join(",") : typeof v === "boolean" ? (spec.kind === "flag" ? "" : v ? "on" : "off") : String(v);
    parts.push(text ? `--${spec.name} ${text}` : `--${spec.name}`);
  }
  return parts.join(" ");
}
