// npm run test:jepsen -- [options]: run one test against real servers, check the
// history, write the report, and exit with the verdict.
import { BadInput, EXIT, commandOptions, namesTypeScript, onParentGone, rerunWithTypeScript } from "../lib/index.ts";
import { TEST_OPTIONS, buildTest, preflight } from "../runner/index.ts";
import { runAndCheck, exitWith } from "./run-and-check.ts";

const USAGE = `Usage: npm run test:jepsen -- [options]

Runs concurrent clients that acquire a lock, write to a protected resource with
their fencing token, and release, against real servers, while a nemesis injects
faults. Records the history, checks it, and writes a report under --store.
Exit: 0 valid, 1 invalid, 2 unknown, 254 bad arguments, 255 the tool failed.`;

async function main(): Promise<number> {
  // A client adapter in TypeScript needs tsx's loader, which the built command lacks.
  const rerun = rerunWithTypeScript(namesTypeScript(process.argv.slice(2), "client"));
  if (rerun) return rerun;
  // A soak runs us with a pipe on our stdin: when the soak dies, even by SIGKILL,
  // the pipe closes, and we stop as on Ctrl-C (heal, tear down, keep the history)
  // rather than run on with nobody to count the run.
  if (process.env.FENCECHECK_LIFELINE === "stdin") onParentGone({ watchStdin: true }, () => process.kill(process.pid, "SIGTERM"));
  let test;
  try {
    const options = commandOptions(process.argv.slice(2), TEST_OPTIONS, USAGE);
    if (!options) return EXIT.valid;
    test = buildTest(options);
    await preflight(test);
  } catch (err) {
    if (err instanceof BadInput) {
      process.stderr.write(`fencecheck: ${err.message}\n`);
      return EXIT.badInput;
    }
    throw err;
  }
  return (await runAndCheck(test)).code;
}

exitWith(main);
