// `fencecheck serve [--port N] [--store DIR]` (in the checkout also `npm run serve
// --`): browse the run store in a browser, on loopback only. Runs until Ctrl-C.
import { BadInput, EXIT, commandOptions, type OptionSpec } from "../lib/index.ts";
import { startServe } from "../serve/index.ts";

const USAGE = `Usage: fencecheck serve [options]

Serves the run store read-only on 127.0.0.1: a list of runs with their verdicts,
and each run's report.html, history, resource log, results, run.json and logs.
Exit: 0 when stopped, 254 bad arguments, 255 the tool failed.`;

// Ports of the servers and tools this project lives beside; a browser tab left on
// one of them must never be answered by us.
const RESERVED_PORTS = [2379, 2380, 6379, 8080, 8474];

export const SERVE_OPTIONS: readonly OptionSpec[] = [
  { name: "port", kind: "int", default: 18080, min: 0, max: 65535, help: `port on 127.0.0.1; 0 picks a free one (never ${RESERVED_PORTS.join(", ")})` },
  { name: "store", kind: "string", default: "histories", help: "directory of the run store" },
];

export async function main(argv: string[]): Promise<number> {
  const options = commandOptions(argv, SERVE_OPTIONS, USAGE);
  if (!options) return EXIT.valid;
  const port = options.port as number;
  if (RESERVED_PORTS.includes(port)) throw new BadInput(`--port ${port} is reserved for the servers fencecheck tests beside; choose another`);
  const handle = await startServe({ port, store: options.store as string });
  process.stdout.write(`serving ${handle.url}\n`);
  await new Promise<void>((resolve) => {
    for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.once(sig, () => resolve());
  });
  await handle.close();
  return EXIT.valid;
}
