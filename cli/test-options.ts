// The options of `npm run test:jepsen`, and how they become a Test: the one
// description of each option, from which --help, defaults and messages come.
import { BadInput, type OptionSpec, type ParsedOptions } from "../lib/index.ts";
import { BACKENDS } from "../runner/backends.ts";
import type { Test } from "../runner/test.ts";
import { CLIENTS } from "../clients/index.ts";
import { WORKLOADS, type WorkloadOptions } from "../workloads/index.ts";
import { NEMESES, GRUDGES } from "../nemesis/index.ts";

export const TEST_OPTIONS: readonly OptionSpec[] = [
  { name: "backend", kind: "string", default: "redis", choices: Object.keys(BACKENDS), help: "lock service to test" },
  { name: "client", kind: "string", default: undefined, defaultText: "the backend's own", choices: Object.keys(CLIENTS), help: "lock client" },
  { name: "workload", kind: "string", default: "fenced-write", choices: Object.keys(WORKLOADS), help: "what clients do" },
  { name: "nemesis", kind: "list", default: ["pause"], choices: [...Object.keys(NEMESES), "none"], help: "faults to inject, comma-separated, or none" },
  { name: "fence", kind: "on-off", default: true, help: "the resource refuses writes with a stale fencing token" },
  { name: "time-limit", kind: "number", default: 30, min: 1, help: "seconds of operations before the final heal" },
  { name: "concurrency", kind: "int", default: 6, min: 1, max: 1000, help: "logical clients in all" },
  { name: "workers", kind: "int", default: 2, min: 1, max: 64, help: "worker processes the clients are spread over" },
  { name: "rate", kind: "number", default: 10, min: 0.01, help: "acquire attempts per second per client (open model)" },
  { name: "keys", kind: "int", default: 1, min: 1, help: "keys the clients spread over (1: one hot key)" },
  { name: "ttl", kind: "int", default: 1000, min: 1, help: "lease TTL in ms" },
  { name: "acquire-timeout", kind: "int", default: 2000, min: 0, help: "ms to keep trying for the lock before the acquire fails" },
  { name: "work", kind: "int", default: 100, min: 0, help: "ms of work while holding, before the writes" },
  { name: "pause", kind: "int", default: 0, min: 0, help: "ms each holder pauses after acquiring (a simulated GC pause)" },
  { name: "pause-clients", kind: "list", default: undefined, defaultText: "all", help: "client ids that take --pause, e.g. 0,2" },
  { name: "writes-per-hold", kind: "int", default: 1, min: 1, help: "writes to the resource per hold" },
  { name: "renew", kind: "on-off", default: false, help: "renew the lease every ttl/3 while holding (the watchdog)" },
  { name: "stagger", kind: "int", default: 0, min: 0, help: "client i starts i*stagger ms after the run starts" },
  { name: "nemesis-interval", kind: "number", default: 2, min: 0.05, help: "seconds between faults (jittered +-50%)" },
  { name: "pause-min", kind: "int", default: 500, min: 1, help: "shortest SIGSTOP in ms" },
  { name: "pause-max", kind: "int", default: 4000, min: 1, help: "longest SIGSTOP in ms" },
  { name: "grace", kind: "number", default: undefined, defaultText: "from ttl, pause and timeouts", min: 0, help: "seconds clients get to finish after the heal" },
  { name: "partition", kind: "list", default: [...GRUDGES], choices: GRUDGES, help: "grudges a partition picks from" },
  { name: "partition-mode", kind: "string", default: "timeout", choices: ["timeout", "reset"], help: "cut links drop data silently (timeout) or refuse connections (reset)" },
  { name: "fault-min", kind: "int", default: 1000, min: 1, help: "shortest partition or latency fault in ms" },
  { name: "fault-max", kind: "int", default: 5000, min: 1, help: "longest partition or latency fault in ms" },
  { name: "latency", kind: "int", default: undefined, defaultText: "0.8 x ttl", min: 1, help: "ms of latency the latency nemesis adds each way" },
  { name: "jitter", kind: "int", default: undefined, defaultText: "latency / 8", min: 0, help: "ms of jitter on that latency" },
  { name: "toxiproxy", kind: "string", default: undefined, defaultText: "our own fault proxy", help: "URL of a Toxiproxy to make the links in, e.g. http://127.0.0.1:8474" },
  { name: "command-timeout", kind: "int", default: undefined, defaultText: "3 x ttl, at least 1000", min: 1, help: "ms without an answer before an operation's outcome is unknown (info)" },
  { name: "seed", kind: "int", default: undefined, defaultText: "random, printed", min: 0, max: 2 ** 31 - 1, help: "the same seed gives the same schedule of operations and faults" },
  { name: "store", kind: "string", default: "histories", help: "directory of the run store" },
  { name: "port-base", kind: "int", default: 0, min: 0, max: 65000, defaultText: "free ports", help: "servers take consecutive ports from here" },
];

export function buildTest(o: ParsedOptions): Test {
  const backend = BACKENDS[o.backend as string];
  const client = (o.client as string | undefined) ?? backend.defaultClient;
  if (!backend.clients.includes(client))
    throw new BadInput(`--client ${client} does not work with --backend ${backend.name}; choose from ${backend.clients.join(", ")}`);
  let nemeses = o.nemesis as string[];
  if (nemeses.includes("none")) {
    if (nemeses.length > 1) throw new BadInput(`--nemesis none cannot be combined with other nemeses`);
    nemeses = [];
  }
  const concurrency = o.concurrency as number;
  const workers = Math.min(o.workers as number, concurrency);
  const pauseClients = o["pause-clients"] === undefined ? ("all" as const) : (o["pause-clients"] as string[]).map((s) => {
    const n = Number(s);
    if (!Number.isInteger(n) || n < 0 || n >= concurrency) throw new BadInput(`--pause-clients: ${JSON.stringify(s)} is not a client id between 0 and ${concurrency - 1}`);
    return n;
  });
  if ((o["fault-min"] as number) > (o["fault-max"] as number)) throw new BadInput(`--fault-min (${o["fault-min"]}) must not exceed --fault-max (${o["fault-max"]})`);
  const toxiproxy = o.toxiproxy as string | undefined;
  if (toxiproxy !== undefined && !/^https?:\/\/[^/]+/.test(toxiproxy)) throw new BadInput(`--toxiproxy must be an http:// URL, got ${JSON.stringify(toxiproxy)}`);
  if ((o["pause-min"] as number) > (o["pause-max"] as number)) throw new BadInput(`--pause-min (${o["pause-min"]}) must not exceed --pause-max (${o["pause-max"]})`);
  const portBase = o["port-base"] as number;
  if (portBase !== 0 && portBase < 1024) throw new BadInput(`--port-base must be 0 (free ports) or at least 1024, got ${portBase}`);
  const workloadOptions: WorkloadOptions = {
    ttlMs: o.ttl as number,
    acquireTimeoutMs: o["acquire-timeout"] as number,
    workMs: o.work as number,
    pauseMs: o.pause as number,
    pauseClients,
    writesPerHold: o["writes-per-hold"] as number,
    keys: o.keys as number,
    rate: o.rate as number,
    staggerMs: o.stagger as number,
    renew: o.renew as boolean,
  };
  const commandTimeoutMs = (o["command-timeout"] as number | undefined) ?? Math.max(1000, 3 * workloadOptions.ttlMs);
  // Enough for a client that was waiting for the lock, or frozen mid-hold, to finish
  // its hold once everything is healed.
  const graceMs =
    o.grace !== undefined
      ? (o.grace as number) * 1000
      : workloadOptions.acquireTimeoutMs + workloadOptions.pauseMs + workloadOptions.workMs + (workloadOptions.writesPerHold + 2) * commandTimeoutMs + 1000;
  const fencing = o.fence as boolean;
  // Each way, so a slow holder's write arrives after its lease while its acquire
  // still completes within the command timeout (see --command-timeout).
  const latencyMs = (o.latency as number | undefined) ?? Math.ceil(0.8 * workloadOptions.ttlMs);
  const workload = WORKLOADS[o.workload as string];
  const name = [backend.name, workload.name, nemeses.length ? nemeses.join("+") : "none", fencing ? "fence-on" : "fence-off"].join("-");
  return {
    name,
    backend,
    client,
    clientOptions: {},
    workload,
    nemeses,
    fencing,
    seed: (o.seed as number | undefined) ?? Math.floor(Math.random() * 2 ** 31),
    timeLimitS: o["time-limit"] as number,
    concurrency,
    workers,
    store: o.store as string,
    portBase,
    graceMs,
    commandTimeoutMs,
    workloadOptions,
    toxiproxy: toxiproxy ?? null,
    nemesisOptions: {
      intervalS: o["nemesis-interval"] as number,
      pauseMinMs: o["pause-min"] as number,
      pauseMaxMs: o["pause-max"] as number,
      faultMinMs: o["fault-min"] as number,
      faultMaxMs: o["fault-max"] as number,
      grudges: o.partition as string[],
      partitionMode: o["partition-mode"] as "timeout" | "reset",
      latencyMs,
      jitterMs: (o.jitter as number | undefined) ?? Math.round(latencyMs / 8),
    },
  };
}
