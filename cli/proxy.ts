// `npm run proxy -- --port N`: the fault proxy on its own, for people and scripts
// that want a Toxiproxy-compatible server without Toxiproxy. The default port is
// 18474, never Toxiproxy's 8474, so a real Toxiproxy on the machine is left alone.
import { BadInput, EXIT } from "../lib/index.ts";
import { parseProxyArgs, proxyUsage, serveProxyProcess } from "../proxy/index.ts";

const COMMAND = "npm run proxy --";
const DEFAULT_PORT = 18474;

try {
  const args = parseProxyArgs(process.argv.slice(2), { command: COMMAND, port: DEFAULT_PORT });
  if (args.help) {
    process.stdout.write(`${proxyUsage(COMMAND, DEFAULT_PORT)}\n`);
    process.exit(EXIT.valid);
  }
  await serveProxyProcess(args);
} catch (e) {
  process.stderr.write(`${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(e instanceof BadInput ? EXIT.badInput : EXIT.crash);
}
