// The subcommands of `fencecheck` and how one is picked and run: the table, the
// help that lists it, "did you mean" for a typo, and the one place a command's
// failures become exit codes (BadInput 254, anything else 255). cli/fencecheck.ts
// is the process around it.
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { BadInput, EXIT } from "../lib/exit.ts";
import { didYouMean } from "../lib/nearest.ts";
import { ROOT, entryFile } from "../lib/paths.ts";

export interface Subcommand {
  /** The module under cli/ whose `main(argv)` runs it. */
  entry: string;
  /** One line for `fencecheck --help`. */
  summary: string;
}

export const SUBCOMMANDS: Record<string, Subcommand> = {
  test: { entry: "cli/test", summary: "run one test: clients take a lock and write with their token under faults; check and report" },
  soak: { entry: "cli/soak", summary: "run every configuration of a matrix many times, each judged against what it expects" },
  check: { entry: "cli/check", summary: "check a stored run again (--out DIR leaves the run untouched)" },
  traces: { entry: "cli/traces", summary: "check a service's own lock spans (OpenTelemetry, OTLP JSON) as a run is checked" },
  scenario: { entry: "cli/scenario", summary: "run one scenario of the failure catalogue, its faults at chosen moments" },
  experiment: { entry: "cli/experiment", summary: "run one of the lab's experiments and store its figures, tables and plots" },
  serve: { entry: "cli/serve", summary: "browse the run store on 127.0.0.1" },
  proxy: { entry: "cli/proxy", summary: "serve the fault proxy alone (a Toxiproxy-compatible API)" },
  reap: { entry: "cli/reap", summary: "kill the processes and remove the containers left by runs that were killed" },
  setup: { entry: "cli/setup", summary: "install what the backends you name need (a run installs what it uses)" },
};

/** What a subcommand module offers: its whole run, from its arguments to an exit code. */
export interface CommandModule {
  main(argv: string[]): Promise<number>;
}

export function version(): string {
  return (JSON.parse(readFileSync(`${ROOT}/package.json`, "utf8")) as { version: string }).version;
}

const USAGE = () => `Usage: fencecheck <command> [options]
       fencecheck <command> --help      the command's options
       fencecheck --version

A Jepsen-style checker for distributed locks: concurrent clients take a lock and
write to a resource with their fencing token against real servers while faults
are injected; every operation is recorded and checked for overlapping holders and
stale writes.

Commands:
${Object.entries(SUBCOMMANDS).map(([name, c]) => `  ${name.padEnd(11)} ${c.summary}`).join("\n")}

Exit codes: 0 valid, 1 invalid, 2 unknown, 254 bad input, 255 the tool failed.`;

/** Runs `fencecheck argv...` and resolves with its exit code. */
export async function dispatch(argv: string[]): Promise<number> {
  const [first, ...rest] = argv;
  if (first === "--version" || first === "-v" || first === "version") {
    process.stdout.write(`${version()}\n`);
    return EXIT.valid;
  }
  if (first === undefined || first === "--help" || first === "-h" || (first === "help" && rest.length === 0)) {
    (first === undefined ? process.stderr : process.stdout).write(`${USAGE()}\n`);
    return first === undefined ? EXIT.badInput : EXIT.valid;
  }
  // `fencecheck help check` is `fencecheck check --help`.
  const [name, args] = first === "help" ? [rest[0], ["--help"]] : [first, rest];
  const command = SUBCOMMANDS[name];
  if (!command) {
    const what = name.startsWith("-") ? `unknown option ${name} before the command` : `unknown command ${JSON.stringify(name)}`;
    const hint = name.startsWith("-") ? didYouMean(name.replace(/^-+/, ""), ["help", "version"], "--") : didYouMean(name, Object.keys(SUBCOMMANDS));
    process.stderr.write(`fencecheck: ${what}${hint} (commands: ${Object.keys(SUBCOMMANDS).join(", ")}; fencecheck --help)\n`);
    return EXIT.badInput;
  }
  try {
    const mod = (await import(pathToFileURL(entryFile(command.entry)).href)) as CommandModule;
    return await mod.main(args);
  } catch (err) {
    if (err instanceof BadInput || (err instanceof Error && err.name === "BadInput")) {
      process.stderr.write(`fencecheck ${name}: ${err.message}\n`);
      return EXIT.badInput;
    }
    process.stderr.write(`fencecheck ${name} failed: ${err instanceof Error ? err.message : String(err)}\n`);
    if (process.env.FENCECHECK_DEBUG && err instanceof Error) process.stderr.write(`${err.stack}\n`);
    return EXIT.crash;
  }
}

