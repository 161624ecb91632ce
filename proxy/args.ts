// The proxy process's command line, shared by proxy/main.ts (spawned, default port
// 0) and cli/proxy.ts (for people, default port 18474). Bad arguments are the
// user's mistake: BadInput, exit 254.
import { BadInput, helpText, noPositional, parseArgs, type OptionSpec } from "../lib/index.ts";

export interface ProxyArgs {
  help: boolean;
  host: string;
  /** 0 picks a free port; the chosen one is printed as {"port":N}. */
  port: number;
  /** Exit when stdin closes: the parent holds the other end and dies with it. */
  watchStdin: boolean;
  /** Only Toxiproxy's toxics (--toxics toxiproxy): block_from answers 400, as in a real Toxiproxy. */
  toxiproxyOnly: boolean;
}

// A function of the default port because the two entry points differ only there.
function proxyOptions(defaultPort: number): readonly OptionSpec[] {
  return [
    { name: "port", kind: "int", default: defaultPort, min: 0, max: 65535, help: "API port, 0..65535; 0 picks a free one" },
    { name: "host", kind: "string", default: "127.0.0.1", help: "address to bind" },
    { name: "watch-stdin", kind: "flag", default: false, help: "exit when stdin closes" },
    { name: "toxics", kind: "string", default: "all", choices: ["all", "toxiproxy"], help: "toxiproxy: only a real Toxiproxy's toxics (block_from answers 400), to try a run as against one" },
  ];
}

export function proxyUsage(command: string, defaultPort: number): string {
  const usage = [
    `usage: ${command} [--port N] [--host ADDR] [--watch-stdin] [--toxics all|toxiproxy]`,
    "",
    "A fault proxy that answers Toxiproxy's HTTP API (proxies, toxics, /reset,",
    "/populate, /version), plus a block_from toxic for cluster peer traffic.",
    'Prints {"port":N} on stdout once listening. Exits on SIGTERM, SIGINT, and when',
    "its parent process dies.",
  ].join("\n");
  // Callers add their own newline, as they did when this was a fixed text.
  return helpText(usage, proxyOptions(defaultPort)).trimEnd();
}

/**
 * `defaults.command` no longer shows up in messages (they name the option, and
 * --help prints the usage), but callers still pass it, so the signature stays.
 */
export function parseProxyArgs(argv: string[], defaults: { command: string; port: number }): ProxyArgs {
  const { options: o, positional, help } = parseArgs(argv, proxyOptions(defaults.port));
  noPositional(positional);
  const host = o.host as string;
  if (host.trim() === "") throw new BadInput("--host must not be empty");
  return { help, host, port: o.port as number, watchStdin: o["watch-stdin"] as boolean, toxiproxyOnly: o.toxics === "toxiproxy" };
}
