// Process entry of the proxy, for spawnProxyServer (spawn.ts): `node --import tsx
// proxy/main.ts --port N --host 127.0.0.1 [--watch-stdin]`. People use cli/proxy.ts.
import { BadInput, EXIT } from "../lib/index.ts";
import { parseProxyArgs, proxyUsage } from "./args.ts";
import { serveProxyProcess } from "./serve.ts";

const COMMAND = "proxy/main.ts";

try {
  const args = parseProxyArgs(process.argv.slice(2), { command: COMMAND, port: 0 });
  if (args.help) {
    process.stdout.write(`${proxyUsage(COMMAND, 0)}\n`);
    process.exit(EXIT.valid);
  }
  await serveProxyProcess(args);
} catch (e) {
  process.stderr.write(`${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(e instanceof BadInput ? EXIT.badInput : EXIT.crash);
}
