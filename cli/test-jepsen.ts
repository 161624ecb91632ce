// npm run test:jepsen -- [options]: run one test against real servers, check the
// history, write the report, and exit with the verdict.
import { BadInput, EXIT, exitCodeFor, helpText, noPositional, parseArgs } from "../lib/index.ts";
import { TEST_OPTIONS, buildTest } from "./test-options.ts";
import { runTest } from "../runner/run.ts";
import { checkAndReport } from "./check.ts";

const USAGE = `Usage: npm run test:jepsen -- [options]

Runs concurrent clients that acquire a lock, write to a protected resource with
their fencing token, and release, against real servers, while a nemesis injects
faults. Records the history, checks it, and writes a report under --store.
Exit: 0 valid, 1 invalid, 2 unknown, 254 bad arguments, 255 the tool failed.`;

async function main(): Promise<number> {
  let test;
  try {
    const { options, positional, help } = parseArgs(process.argv.slice(2), TEST_OPTIONS);
    if (help) {
      process.stdout.write(helpText(USAGE, TEST_OPTIONS));
      return EXIT.valid;
    }
    noPositional(positional);
    test = buildTest(options);
  } catch (err) {
    if (err instanceof BadInput) {
      process.stderr.write(`fencecheck: ${err.message}\n`);
      return EXIT.badInput;
    }
    throw err;
  }
  const { runDir, interrupted } = await runTest(test);
  if (interrupted) {
    process.stderr.write(`Interrupted; the history so far is in ${runDir}. Check it with: npm run check -- ${runDir}\n`);
    return 130;
  }
  const { results, summary, warnings } = await checkAndReport(runDir);
  for (const w of warnings) process.stderr.write(`warning: ${w}\n`);
  process.stdout.write(summary + "\n");
  process.stdout.write(`Run directory: ${runDir}\n`);
  return exitCodeFor(results.valid);
}

main().then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(`fencecheck failed: ${err instanceof Error ? err.message : String(err)}\n`);
    if (process.env.FENCECHECK_DEBUG && err instanceof Error) process.stderr.write(`${err.stack}\n`);
    process.exit(EXIT.crash);
  },
);
