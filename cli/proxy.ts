// `fencecheck proxy [--port N]` (in the checkout also `npm run proxy --`): the fault
// proxy on its own, for people and scripts that want a Toxiproxy-compatible
// server without Toxiproxy. The default port is 18474, never Toxiproxy's 8474, so
// a real Toxiproxy on the machine is left alone.
import { EXIT } from "../lib/index.ts";
import { parseProxyArgs, proxyUsage, serveProxyProcess } from "../proxy/index.ts";

const COMMAND = "fencecheck proxy";
const DEFAULT_PORT = 18474;

export async function main(argv: string[]): Promise<number> {
  const args = parseProxyArgs(argv, { command: COMMAND, port: DEFAULT_PORT });
  if (args.help) {
    process.stdout.write(`${proxyUsage(COMMAND, DEFAULT_PORT)}\n`);
    return EXIT.valid;
  }
  await serveProxyProcess(args);
  // It serves until a signal or its parent's death, and then exits by itself (proxy/serve.ts).
  return new Promise<number>(() => {});
}
