// `fencecheck test [options]` (in the checkout also `npm run test:jepsen --`):
// build the test from the options, install what it needs, check the options
// against the machine (preflight), run it, check the history, write the report,
// and exit with the verdict.
import { EXIT, commandOptions, namesTypeScript, onParentGone, rerunWithTypeScript } from "../lib/index.ts";
import { TEST_OPTIONS, buildTest, preflight } from "../runner/index.ts";
import { ensureFor } from "../runner/index.ts";
import { runAndCheck } from "./run-and-check.ts";

export const USAGE = `Usage: fencecheck test [options]

Runs concurrent clients that acquire a lock, write to a protected resource with
their fencing token, and release, against real servers, while a nemesis injects
faults. Records the history, checks it, and writes a report under --store.
Installs the Debian packages the test needs and the machine lacks first.
Exit: 0 valid, 1 invalid, 2 unknown, 254 bad arguments, 255 the tool failed.`;

export async function main(argv: string[]): Promise<number> {
  // A client adapter in TypeScript needs tsx's loader, which the built command lacks.
  const rerun = rerunWithTypeScript(namesTypeScript(argv, "client"));
  if (rerun) return rerun;
  // A soak runs us with a pipe on our stdin: when the soak dies, even by SIGKILL,
  // the pipe closes, and we stop as on Ctrl-C (heal, tear down, keep the history)
  // rather than run on with nobody to count the run.
  if (process.env.FENCECHECK_LIFELINE === "stdin") onParentGone({ watchStdin: true }, () => process.kill(process.pid, "SIGTERM"));
  const options = commandOptions(argv, TEST_OPTIONS, USAGE);
  if (!options) return EXIT.valid;
  const test = buildTest(options);
  await ensureFor(test);
  await preflight(test);
  return (await runAndCheck(test)).code;
}
