// The resource process's command line. Bad arguments are the user's mistake, so
// they come back as BadInput (exit 254) with a message naming the argument.
import type { Rule } from "./fences.ts";
import { BadInput, helpText, noPositional, parseArgs, parseHostPort, type OptionSpec } from "../lib/index.ts";

export interface ResourceArgs {
  /** 0 picks a free port. */
  port: number;
  /** resource.ndjson, appended to. */
  log: string;
  fencing: boolean;
  fenceReads: boolean;
  /** Exit when stdin closes: the parent holds the other end and dies with it. */
  watchStdin: boolean;
  /** Keep the state in this Postgres, which then decides each write (absent: in memory). */
  pg: { host: string; port: number } | null;
  /** Keep the state in this DynamoDB endpoint's table, which then decides each write. */
  dynamo: { host: string; port: number; table: string } | null;
  /** The lock kind's rule (--rule), a mutex's unless asked. */
  rule: Rule;
}

export const USAGE =
  "usage: resource/main.ts --log <resource.ndjson> --fence on|off [--port N] [--fence-reads] [--watch-stdin] [--pg HOST:PORT | --dynamo HOST:PORT [--dynamo-table NAME]]";

const RESOURCE_OPTIONS: readonly OptionSpec[] = [
  { name: "log", kind: "string", default: undefined, required: true, help: "resource.ndjson, the decision log, appended to" },
  { name: "fence", kind: "on-off", default: undefined, required: true, help: "refuse writes that carry a stale fencing token" },
  { name: "port", kind: "int", default: 0, min: 0, max: 65535, help: "port to listen on; 0 picks a free one" },
  { name: "fence-reads", kind: "flag", default: false, help: "a read that carries a fence advances the key's fence too" },
  { name: "watch-stdin", kind: "flag", default: false, help: "exit when stdin closes" },
  { name: "rule", kind: "string", default: "mutex", help: "the rule per lock kind: mutex, reentrant, rw, or semaphore:N (N permits)" },
  { name: "pg", kind: "string", default: undefined, help: "keep each key's value and highest fence in this Postgres (HOST:PORT), which decides each write with a conditional UPDATE" },
  { name: "dynamo", kind: "string", default: undefined, help: "keep each key's value and highest fence in this DynamoDB endpoint (HOST:PORT, plain HTTP), which decides each write with a conditional UpdateItem" },
  { name: "dynamo-table", kind: "string", default: "fencecheck_resource", help: "the table --dynamo keeps the keys in (created if missing)" },
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
  const pg = o.pg === undefined ? null : hostPort("pg", o.pg as string);
  const dynamo = o.dynamo === undefined ? null : { ...hostPort("dynamo", o.dynamo as string), table: o["dynamo-table"] as string };
  if (pg && dynamo) throw new BadInput("--pg and --dynamo name two stores: the resource keeps its state in one");
  const store = pg ? "--pg" : dynamo ? "--dynamo" : null;
  if (store && (o["fence-reads"] as boolean)) throw new BadInput(`--fence-reads is not supported with ${store}: the database keeps one fence per key, the written one`);
  const rule = ruleOf(o.rule as string);
  if (store && rule.kind !== "mutex") throw new BadInput(`--rule ${o.rule} is not supported with ${store}: the database keeps a mutex's rule only`);
  if (dynamo && !/^[A-Za-z0-9_.-]{3,255}$/.test(dynamo.table)) throw new BadInput(`--dynamo-table must be 3 to 255 of A-Z a-z 0-9 _ . -, got ${JSON.stringify(dynamo.table)}`);
  return {
    pg,
    dynamo,
    port: o.port as number,
    log,
    fencing: o.fence as boolean,
    fenceReads: o["fence-reads"] as boolean,
    watchStdin: o["watch-stdin"] as boolean,
    rule,
  };
}

function ruleOf(v: string): Rule {
  if (v === "mutex" || v === "rw" || v === "reentrant") return { kind: v, permits: 1 };
  const m = /^semaphore:(\d+)$/.exec(v);
  const permits = m ? Number(m[1]) : NaN;
  if (!Number.isSafeInteger(permits) || permits < 1) throw new BadInput(`--rule must be mutex, reentrant, rw or semaphore:N (N >= 1), got ${JSON.stringify(v)}`);
  return { kind: "semaphore", permits };
}

function hostPort(option: string, v: string): { host: string; port: number } {
  const address = parseHostPort(v);
  if (!address) throw new BadInput(`--${option} must be HOST:PORT, got ${JSON.stringify(v)}`);
  return address;
}
