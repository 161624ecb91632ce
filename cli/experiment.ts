// `fencecheck experiment <name> [options]` (in the checkout also `npm run
// experiment --`): one of the lab's experiments, against real servers, stored
// under <store>/experiments/<name>/<timestamp>/ with results.json and a
// self-contained report.html of its tables and plots.
// `fencecheck experiment --list`: each experiment with what it measures.
import { BadInput, EXIT, didYouMean, helpText, parseArgs, type OptionSpec } from "../lib/index.ts";
import { EXPERIMENTS, createExperimentDir, listing, writeExperiment, EXPERIMENT_FILES, Interrupted } from "../experiments/index.ts";
import { join } from "node:path";
import { ensure } from "../setup/index.ts";

const USAGE = `Usage: fencecheck experiment <name> [options]
       fencecheck experiment <name> --help     what it measures, and its options
       fencecheck experiment --list

Runs one of the lab's experiments against real servers and stores it under
<store>/experiments/<name>/<timestamp>/: results.json (every figure, and the
tables and plots as data), report.html (readable offline) and runs/ (the
test runs it made). --quick runs a short version (what the tests use):
its figures show the experiment works, not what it measures.
Exit: 0 when the figures were stored, 130 interrupted, 254 bad arguments,
255 the tool failed.`;

/** Options every experiment takes. */
export const COMMON: readonly OptionSpec[] = [
  { name: "quick", kind: "flag", default: false, help: "a short version (the tests run it): checks the experiment works, measures little" },
  { name: "store", kind: "string", default: "histories", help: "the run store; the experiment goes under <store>/experiments/" },
];

async function experiment(argv: string[]): Promise<number> {
  if (argv[0] === "--list") {
    if (argv.length > 1) throw new BadInput(`--list takes nothing after it, got ${argv.slice(1).join(" ")}`);
    console.log(listing());
    return EXIT.valid;
  }
  if (argv.length === 0 || argv[0] === "--help" || argv[0] === "-h") {
    console.log(`${USAGE}\n\nExperiments:\n${listing()}`);
    return argv.length === 0 ? EXIT.badInput : EXIT.valid;
  }
  const [name, ...rest] = argv;
  const e = EXPERIMENTS[name];
  if (!e) throw new BadInput(`no experiment named ${JSON.stringify(name)}${didYouMean(name, Object.keys(EXPERIMENTS))} (experiments: ${Object.keys(EXPERIMENTS).join(", ")})`);
  const specs = [...e.options, ...COMMON];
  const { options, positional, help } = parseArgs(rest, specs);
  if (help) {
    console.log(helpText(`Usage: fencecheck experiment ${e.name} [options]\n\n${e.title}: ${e.describe}.\n--quick sets ${Object.entries(e.quick).map(([k, v]) => `--${k} ${Array.isArray(v) ? v.join(",") : v}`).join(" ")}.`, specs));
    return EXIT.valid;
  }
  if (positional.length) throw new BadInput(`unexpected argument ${JSON.stringify(positional[0])}: options start with --`);
  const quick = options.quick === true;
  // --quick fills in what the user did not set.
  const given = new Set(rest.filter((a) => a.startsWith("--")).map((a) => a.slice(2).split("=")[0]));
  if (quick) for (const [k, v] of Object.entries(e.quick)) if (!given.has(k)) options[k] = v;
  const starts = e.starts?.(options) ?? [];
  if (starts.length) await ensure(starts);
  const { dir, started } = createExperimentDir(String(options.store), e.name);
  const log = (line: string): void => void process.stderr.write(`${line}\n`);
  log(`fencecheck experiment ${e.name}${quick ? " (--quick)" : ""}: ${dir}`);
  const findings = await e.run({ options, quick, dir, runStore: join(dir, EXPERIMENT_FILES.runs), log });
  const record = { name: e.name, title: e.title, started, finished: new Date().toISOString(), quick, command: `fencecheck experiment ${argv.join(" ")}`, options: { ...options } };
  writeExperiment(dir, record, findings);
  for (const s of findings.summary) console.log(s);
  for (const t of findings.tables) {
    console.log(`\n${t.title}`);
    const cells = [t.head, ...t.rows.map((r) => r.map(String))];
    const widths = t.head.map((_, i) => Math.max(...cells.map((r) => r[i].length)));
    for (const r of cells) console.log(`  ${r.map((c, i) => c.padEnd(widths[i])).join("  ").trimEnd()}`);
    if (t.note) console.log(`  ${t.note}`);
  }
  console.log(`\nExperiment directory: ${dir}\nReport: ${join(dir, EXPERIMENT_FILES.report)}`);
  return EXIT.valid;
}

/** The dispatcher (cli/commands.ts) turns BadInput into 254; an interruption is 130 with nothing stored. */
export async function main(argv: string[]): Promise<number> {
  try {
    return await experiment(argv);
  } catch (err) {
    if (err instanceof Interrupted) {
      process.stderr.write(`fencecheck experiment: ${err.message}; no results stored\n`);
      return 130;
    }
    throw err;
  }
}
