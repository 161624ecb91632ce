// The proxy process's command line, shared by proxy/main.ts (spawned, default port
// 0) and cli/proxy.ts (for people, default port 18474). Bad arguments are the
// user's mistake: BadInput, exit 254.
import { parseArgs } from "node:util";
import { BadInput } from "../lib/index.ts";

export interface ProxyArgs {
  help: boolean;
  host: string;
  /** 0 picks a free port; the chosen one is printed as {"port":N}. */
  port: number;
  /** Exit when stdin closes: the parent holds the other end and dies with it. */
  watchStdin: boolean;
}

export function proxyUsage(command: string, defaultPort: number): string {
  return [
    `usage: ${command} [--port N] [--host ADDR] [--watch-stdin]`,
    "",
    "A fault proxy that answers Toxiproxy's HTTP API (proxies, toxics, /reset,",
    "/populate, /version), plus a block_from toxic for cluster peer traffic.",
    "",
    `  --port N        API port, 0..65535; 0 picks a free one (default ${defaultPort})`,
    "  --host ADDR     address to bind (default 127.0.0.1)",
    "  --watch-stdin   exit when stdin closes",
    "  --help          this text",
    "",
    'Prints {"port":N} on stdout once listening. Exits on SIGTERM, SIGINT, and when',
    "its parent process dies.",
  ].join("\n");
}

export function parseProxyArgs(argv: string[], defaults: { command: string; port: number }): ProxyArgs {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        port: { type: "string" },
        host: { type: "string", default: "127.0.0.1" },
        "watch-stdin": { type: "boolean", default: false },
        help: { type: "boolean", short: "h", default: false },
      },
    }));
  } catch (e) {
    throw new BadInput(`${(e as Error).message}\n${proxyUsage(defaults.command, defaults.port)}`);
  }
  const rawPort = values.port ?? String(defaults.port);
  const port = Number(rawPort);
  if (!/^\d{1,5}$/.test(rawPort) || port > 65535) throw new BadInput(`--port must be an integer in 0..65535, got ${JSON.stringify(rawPort)}`);
  const host = values.host ?? "127.0.0.1";
  if (host.trim() === "") throw new BadInput("--host must not be empty");
  return { help: values.help ?? false, host, port, watchStdin: values["watch-stdin"] ?? false };
}
