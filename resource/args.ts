// The resource process's command line. Bad arguments are the user's mistake, so
// they come back as BadInput (exit 254) with a message naming the argument.
import type { Rule } from "./fences.ts";
import { BadInput, helpText, noPositional, parseArgs, type OptionSpec } from "../lib/index.ts";

export interface ResourceArgs {
  /** 0 picks a free port. */
  port: number;
  /** resource.ndjson, appended to. */
  log: string;
  fencing: boolean;
  fenceReads: boolean;
  /** Exit when stdin closes: the parent holds the other end and dies with it. */
  watchStdin: boolean;
  /** Keep the state in a store a backend offers, which then decides each write: its decider's entry point and what it is given (absent: in memory). */
  store: { entry: string; config: Record<string, unknown> } | null;
  /** The lock kind's rule (--rule), a mutex's unless asked. */
  rule: Rule;
  /** --otel URL: a collector's OTLP/HTTP receiver to send a lock.decision span of each decision to. */
  otel: string | null;
}

export const USAGE =
  "usage: resource/main.ts --log <resource.ndjson> --fence on|off [--port N] [--fence-reads] [--watch-stdin] [--store ENTRY --store-config JSON] [--otel URL]";

const RESOURCE_OPTIONS: readonly OptionSpec[] = [
  { name: "log", kind: "string", default: undefined, required: true, help: "resource.ndjson, the decision log, appended to" },
  { name: "fence", kind: "on-off", default: undefined, required: true, help: "refuse writes that carry a stale fencing token" },
  { name: "port", kind: "int", default: 0, min: 0, max: 65535, help: "port to listen on; 0 picks a free one" },
  { name: "fence-reads", kind: "flag", default: false, help: "a read that carries a fence advances the key's fence too" },
  { name: "watch-stdin", kind: "flag", default: false, help: "exit when stdin closes" },
  { name: "rule", kind: "string", default: "mutex", help: "the rule per lock kind: mutex, reentrant, rw, or semaphore:N (N permits)" },
  { name: "store", kind: "string", default: undefined, help: "keep each key's value and highest fence in a store a backend offers, which decides each write: the entry point of its decider (backends/NAME/decider)" },
  { name: "otel", kind: "string", default: undefined, help: "send a lock.decision span (docs/traces.md) of each decision to this OTLP/HTTP receiver, http://127.0.0.1:PORT" },
  { name: "store-config", kind: "string", default: "{}", help: "what that decider is given, as a JSON object (the store's address, its table)" },
];

export function parseResourceArgs(argv: string[]): ResourceArgs {
  const { options: o, positional, help } = parseArgs(argv, RESOURCE_OPTIONS);
  // Only startResource runs this process and main.ts has no help path, so --help
  // is refused like any other mistake, with the text it asked for as the message.
  if (help) throw new BadInput(helpText(USAGE, RESOURCE_OPTIONS).trimEnd());
  noPositional(positional);
  const log = o.log as string;
  // An empty path is as good as none: the decision log would be opened nowhere.
  if (log === "") throw new BadInput("--log is required");
  const store = o.store === undefined ? null : { entry: o.store as string, config: configOf(o["store-config"] as string) };
  if (store && !/^backends\/[a-z0-9-]+\/[a-z0-9-]+$/.test(store.entry)) throw new BadInput(`--store must name a backend's decider, backends/NAME/FILE, got ${JSON.stringify(store.entry)}`);
  if (store && (o["fence-reads"] as boolean)) throw new BadInput(`--fence-reads is not supported with --store ${store.entry}: the database keeps one fence per key, the written one`);
  const rule = ruleOf(o.rule as string);
  if (store && rule.kind !== "mutex") throw new BadInput(`--rule ${o.rule} is not supported with --store ${store.entry}: the database keeps a mutex's rule only`);
  return {
    store,
    port: o.port as number,
    log,
    fencing: o.fence as boolean,
    fenceReads: o["fence-reads"] as boolean,
    watchStdin: o["watch-stdin"] as boolean,
    rule,
    otel: otelOf(o.otel as string | undefined),
  };
}

function otelOf(v: string | undefined): string | null {
  if (v === undefined) return null;
  if (!/^http:\/\/[^/\s]+$/.test(v)) throw new BadInput(`--otel must be a receiver's http://HOST:PORT, got ${JSON.stringify(v)}`);
  return v;
}

function ruleOf(v: string): Rule {
  if (v === "mutex" || v === "rw" || v === "reentrant") return { kind: v, permits: 1 };
  const m = /^semaphore:(\d+)$/.exec(v);
  const permits = m ? Number(m[1]) : NaN;
  if (!Number.isSafeInteger(permits) || permits < 1) throw new BadInput(`--rule must be mutex, reentrant, rw or semaphore:N (N >= 1), got ${JSON.stringify(v)}`);
  return { kind: "semaphore", permits };
}

function configOf(v: string): Record<string, unknown> {
  let config: unknown;
  try {
    config = JSON.parse(v);
  } catch (err) {
    throw new BadInput(`--store-config must be a JSON object: ${(err as Error).message}`);
  }
  if (typeof config !== "object" || config === null || Array.isArray(config)) throw new BadInput(`--store-config must be a JSON object, got ${v}`);
  return config as Record<string, unknown>;
}
