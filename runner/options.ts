// The options of `fencecheck test`, and how they become a Test. Each option is
// described once: the general ones here, each backend's own in its folder
// (backends/NAME/index.ts). --help, the API's TestOptions type, docs/options.md,
// the defaults and the messages for bad values all come from these
// descriptions; the rules between options are named checks (option-rules.ts).
import { readFileSync } from "node:fs";
import { BadInput, type OptionSpec, type OptionsOf, type ParsedOptions } from "../lib/index.ts";
import { parseEndpoints, toxiproxyUrl, type ExternalServer } from "../cluster/external.ts";
import { BACKEND_NAMES, BACKEND_OPTIONS, CLIENTS, STORE_NAMES, backendNamed, type BackendOptionSpec } from "../backends/index.ts";
import type { Backend, BackendOptions, ClientKind, DeployName, Test } from "../core/index.ts";
import { FENCE_SOURCES, adapterPath, isAdapterPath, type ClientOptions, type FenceSource, type LockKind } from "../clients/index.ts";
import { WORKLOADS, type LockSpec, type WorkloadOptions } from "../workloads/index.ts";
import { NEMESES, GRUDGES, WHOLE_SERVER, CLOCK_MODES, CLOCK_TARGETS, AIMS, nemesisNamed, type Aim, type ClockTarget, type NemesisName } from "../nemesis/index.ts";
import { checkParts, checkTest } from "./option-rules.ts";

/** The clients a fact is true of, named in help texts. */
const clientsWith = (fact: (c: ClientKind) => boolean | undefined): string => Object.keys(CLIENTS).filter((name) => fact(CLIENTS[name])).join(", ");

/** The options every backend takes, in the order --help lists them; each backend's own follow `restart-delay`. */
const GENERAL_OPTIONS = [
  { name: "backend", kind: "string", default: BACKEND_NAMES[0], choices: BACKEND_NAMES, help: "lock service to test" },
  { name: "client", kind: "string", default: undefined, defaultText: "the backend's own", help: `lock client: ${Object.keys(CLIENTS).join(", ")}, or the path of an adapter of your own: a module (./my-lock.ts; see examples/redis-lock-adapter.ts) or an adapter program's manifest in any language (./my-lock.adapter.json; see docs/adapter-protocol.md)` },
  { name: "workload", kind: "string", default: "fenced-write", choices: Object.keys(WORKLOADS) as (keyof typeof WORKLOADS)[], help: "what clients do" },
  { name: "lock", kind: "string", default: "mutex", choices: ["mutex", "reentrant", "rw", "semaphore:N"], help: "the kind of lock: mutex, reentrant (a hold re-enters to a random depth and releases back down), rw (readers share, a writer excludes) or semaphore:N (N holders at once)" },
  { name: "read-ratio", kind: "number", default: undefined, defaultText: "0.5", min: 0, max: 1, help: "--lock rw: the share of acquires that ask to read" },
  { name: "max-depth", kind: "int", default: undefined, defaultText: "3", min: 2, max: 64, help: "--lock reentrant: the deepest re-entry of a hold (each hold goes to a random depth from 1 to this)" },
  { name: "cancel-rate", kind: "number", default: 0, min: 0, max: 1, help: "the share of waiting acquires withdrawn before their timeout (the client must be able to cancel a wait)" },
  { name: "liveness", kind: "string", default: "lenient", choices: ["lenient", "strict"], help: "strict: a stuck-lock finding (waiters, and no hold, for longer than the TTL plus the command timeout) makes the run invalid" },
  { name: "nemesis", kind: "list", default: ["pause"], choices: [...(Object.keys(NEMESES) as NemesisName[]), "none"], help: "faults to inject, comma-separated, or none" },
  { name: "fence", kind: "on-off", default: true, help: "the resource refuses writes with a stale fencing token" },
  {
    name: "fence-source",
    kind: "string",
    default: undefined,
    defaultText: "max-incr",
    choices: FENCE_SOURCES,
    help: `where a hold's fence comes from, for the clients that make it from several servers' counters (${clientsWith((c) => c.fenceFromMajority)}) and for a lock that issues none, on a backend with counters to take it from (${BACKEND_NAMES.filter((b) => backendNamed(b)?.fenceCounter).join(", ")}): none; the largest of the granting majority's counters (unsafe, F2); one counter alone, on the first server (a single point of failure)`,
  },
  { name: "resource", kind: "string", default: "memory", choices: ["memory", ...STORE_NAMES], help: `where the protected resource keeps each key's value and fence, and so who decides a write: its own memory, or ${STORE_NAMES.map((s) => `${s}: ${backendNamed(s)?.resourceStore?.describe}`).join("; ")}` },
  { name: "fence-reads", kind: "flag", default: false, help: "reads carry the hold's fence and advance the resource's fence too (counter; closes C1)" },
  { name: "time-limit", kind: "number", default: 30, min: 1, help: "seconds of operations before the final heal" },
  { name: "concurrency", kind: "int", default: 6, min: 1, max: 1000, help: "logical clients in all" },
  { name: "workers", kind: "int", default: 2, min: 1, max: 64, help: "worker processes the clients are spread over" },
  { name: "rate", kind: "number", default: 10, min: 0.01, help: "acquire attempts per second per client (open model; a client busy past its next attempt makes one when free, with no catch-up burst)" },
  { name: "keys", kind: "int", default: 1, min: 1, help: "keys the clients spread over (1: one hot key)" },
  { name: "ttl", kind: "int", default: 1000, min: 1, help: "lease TTL in ms" },
  { name: "acquire-timeout", kind: "int", default: 2000, min: 0, help: "ms to keep trying for the lock before the acquire fails" },
  { name: "work", kind: "int", default: 100, min: 0, help: "ms of work while holding, before the writes" },
  { name: "pause", kind: "int", default: 0, min: 0, help: "ms each holder pauses, after acquiring unless --pause-at says otherwise (a simulated GC pause)" },
  { name: "pause-clients", kind: "list", default: undefined, defaultText: "all", help: "client ids that take --pause, e.g. 0,2" },
  {
    name: "pause-at",
    kind: "string",
    default: "acquire",
    choices: ["acquire", "read", "replies", "reenter", "release"],
    help: `where --pause is taken: after acquiring, between the read and the write (counter), inside an acquire between the servers' replies and the decision (${clientsWith((c) => c.pausesBetweenReplies)}: K5), after each re-entry is granted (--lock reentrant, before that depth's work and write: R2), or just before the hold's release (after a reentrant hold's inner releases, as the outer block's own work after its inner block returns: R1)`,
  },
  { name: "writes-per-hold", kind: "int", default: 1, min: 1, help: "writes to the resource per hold" },
  { name: "renew", kind: "on-off", default: false, help: "renew the lease every ttl/3 while holding (the watchdog)" },
  { name: "stagger", kind: "int", default: 0, min: 0, help: "client i starts i*stagger ms after the run starts" },
  { name: "nemesis-interval", kind: "number", default: undefined, defaultText: "2, or time-limit / 15 for runs under 30 s (at least 0.5)", min: 0.05, help: "seconds between faults (jittered +-50%)" },
  { name: "aim", kind: "string", default: undefined, defaultText: "holder", choices: AIMS, help: "where faults land: holder (a pause or latency on a worker whose client holds a lock, a kill, clock jump or server pause on a node that granted the hold, a partition that leaves the holder's worker without the lock service) or random" },
  { name: "pause-target", kind: "string", default: undefined, defaultText: "holder", choices: AIMS, help: "the old name of --aim" },
  { name: "pause-min", kind: "int", default: undefined, defaultText: "ttl / 2", min: 1, help: "shortest SIGSTOP in ms" },
  { name: "pause-max", kind: "int", default: undefined, defaultText: "4 x ttl", min: 1, help: "longest SIGSTOP in ms" },
  { name: "grace", kind: "number", default: undefined, defaultText: "from ttl, pause and timeouts", min: 0, help: "seconds clients get to finish after the heal" },
  { name: "partition", kind: "list", default: undefined, defaultText: `${GRUDGES.join(",")} (behind proxies of yours: ${WHOLE_SERVER.join(",")})`, choices: GRUDGES, help: "grudges a partition picks from" },
  {
    name: "partition-mode",
    kind: "string",
    default: "timeout",
    choices: ["timeout", "reset", "network"],
    help: `cut links drop data silently (timeout) or refuse connections (reset); network (--deploy docker, a backend whose members talk to each other: ${BACKEND_NAMES.filter((b) => backendNamed(b)?.members).join(", ")}): links as timeout, and the members cut off the run's container network instead of through the fault proxy (some backends' members in containers are always cut off that way)`,
  },
  { name: "fault-min", kind: "int", default: undefined, defaultText: "ttl", min: 1, help: "shortest partition, latency or clock fault in ms" },
  { name: "fault-max", kind: "int", default: undefined, defaultText: "5 x ttl", min: 1, help: "longest partition, latency or clock fault in ms" },
  { name: "latency", kind: "int", default: undefined, defaultText: "1.2 x ttl", min: 1, help: "ms of latency the latency nemesis adds each way" },
  { name: "jitter", kind: "int", default: undefined, defaultText: "latency / 8", min: 0, help: "ms of jitter on that latency" },
  { name: "clock-offset", kind: "int", default: undefined, defaultText: "2 x ttl", min: 1, help: "ms a clock fault moves a wall clock, forward or back at random" },
  { name: "clock-target", kind: "string", default: undefined, defaultText: "servers", choices: CLOCK_TARGETS, help: "whose wall clocks --nemesis clock moves: the lock servers', or the client worker processes' and their adapter programs' (a lease judged by the client's clock; any backend; the history's times stay on the monotonic clock)" },
  { name: "clock-modes", kind: "list", default: [...CLOCK_MODES], choices: CLOCK_MODES, help: "clock faults to pick from: bump (one jump) or strobe (flip back and forth)" },
  { name: "strobe-period", kind: "int", default: 100, min: 1, help: "ms between the flips of a strobing clock" },
  { name: "restart-delay", kind: "int", default: undefined, defaultText: "ttl", min: 0, help: "ms a killed server stays down before it is started again" },
  { name: "deploy", kind: "string", default: "local", choices: ["local", "docker", "external"], help: "where the lock servers run: local child processes, containers of a Docker API engine (DOCKER_HOST, /var/run/docker.sock, Podman's socket), or a cluster of yours (--endpoints)" },
  {
    name: "endpoints",
    kind: "string",
    default: undefined,
    help: `--deploy external: the servers, host:port or name=host:port comma-separated, or a JSON file with control commands, a Toxiproxy and proxies of yours (docs/clusters.md); ${BACKEND_NAMES.flatMap((b) => {
      const from = backendNamed(b)?.external?.serversFrom;
      return from ? [`--backend ${b} may leave it out and take ${from}`] : [];
    }).join("; ")}`,
  },
  { name: "key-prefix", kind: "string", default: undefined, defaultText: "fencecheck:<run>: with --deploy external, else none", help: "every lock key's name starts with this; a run's keys (and whatever it makes there for itself: a table, a schema) are deleted at the end with --deploy external (docs/clusters.md)" },
  { name: "pause-mode", kind: "string", default: "signal", choices: ["signal", "freeze"], help: "how pause-server holds a server: SIGSTOP to its process, or (--deploy docker) the cgroup freezer (docker pause)" },
  { name: "toxiproxy", kind: "string", default: undefined, defaultText: "our own fault proxy", help: "URL of a Toxiproxy of yours to make the links in, e.g. http://127.0.0.1:8474; or auto: Shopify's Toxiproxy, built by fencecheck setup --extras toxiproxy (a run builds it if need be), started for the run on a port of its own and stopped with it" },
  { name: "links", kind: "string", default: "proxy", choices: ["proxy", "direct"], help: "how workers reach the servers and the resource: through the fault proxy (partitions and latency need it), or directly, for measurements without the proxy's cost" },
  {
    name: "connections",
    kind: "string",
    default: "per-client",
    choices: ["per-client", "per-worker"],
    help: `the clients that can share a connection (${clientsWith((c) => c.sharesConnection)}): each logical client its own client and connections, as separate programs have, or one shared by the clients of a worker, as one program's goroutines share theirs (for many contenders: a thousand gRPC clients stall a worker)`,
  },
  { name: "command-timeout", kind: "int", default: undefined, defaultText: "3 x ttl, at least 1000", min: 1, help: "ms without an answer before an operation's outcome is unknown (info)" },
  { name: "seed", kind: "int", default: undefined, defaultText: "random, printed", min: 0, max: 2 ** 31 - 1, help: "the same seed gives the same schedule of operations and faults" },
  { name: "store", kind: "string", default: "histories", help: "directory of the run store" },
  { name: "keep-data", kind: "flag", default: false, help: "keep the servers' data directories (data/) in the run directory; by default they are removed at the end (a server may preallocate its write-ahead log: 128 MB a member for some)" },
  { name: "port-base", kind: "int", default: 0, min: 0, max: 65000, defaultText: "free ports", help: "servers, then the run's links, take consecutive ports from here" },
  { name: "metrics-port", kind: "int", default: undefined, defaultText: "off", min: 0, max: 65535, help: "serve every worker's, the fault proxy's and the resource's Prometheus metrics at http://127.0.0.1:PORT/metrics during the run (0: a free port, printed at start)" },
  { name: "otel", kind: "flag", default: false, help: "the workers and the resource also emit their lock, write and decision spans (docs/traces.md) through the OpenTelemetry SDK to a Collector started for the run (fencecheck setup --extras otelcol; a run builds it if need be), which writes them to otel/spans.json; the run then checks those spans too and prints the trace check's verdict beside its own" },
  { name: "model", kind: "string", default: "lease", choices: ["lease", "strict"], help: "strict: the model check's strict-mutex-violation makes a run invalid (leases break a strict mutex by design)" },
] as const satisfies readonly OptionSpec[];

type GeneralOptionSpec = (typeof GENERAL_OPTIONS)[number];
/** One option of `fencecheck test`: a general one, or a backend's own. */
export type TestOptionSpec = GeneralOptionSpec | BackendOptionSpec;

const AFTER = GENERAL_OPTIONS.findIndex((o) => o.name === "restart-delay") + 1;
export const TEST_OPTIONS: readonly TestOptionSpec[] = [...GENERAL_OPTIONS.slice(0, AFTER), ...BACKEND_OPTIONS, ...GENERAL_OPTIONS.slice(AFTER)];

/**
 * The options of `fencecheck test` by their camelCase names, as the API takes
 * them (timeLimit is --time-limit): each one's type follows its declaration, so
 * that changing an option's kind or choices changes this type.
 */
export type TestOptions = OptionsOf<TestOptionSpec>;

/** The general options as parseArgs gives them: each value of its option's kind (absent where the option has no default and was not given). */
type ParsedValue<S> = S extends { kind: "int" | "number" }
  ? number
  : S extends { kind: "on-off" | "flag" }
    ? boolean
    : S extends { kind: "list"; choices: readonly (infer C)[] }
      ? C[]
      : S extends { kind: "list" }
        ? string[]
        : S extends { kind: "string"; choices: readonly (infer C)[] }
          ? C extends `${infer P}:N`
            ? `${P}:${number}`
            : C
          : string;
export type GeneralOptions = { readonly [S in GeneralOptionSpec as S["name"]]: ParsedValue<S> | (S extends { default: undefined } ? undefined : never) };

/**
 * parseArgs(argv, TEST_OPTIONS) gives every option a value of its kind, within
 * its choices, and its default where it has one: that is this type, named once
 * here rather than cast at each use.
 */
export const generalOptions = (o: ParsedOptions): GeneralOptions => o as unknown as GeneralOptions;

export function buildTest(parsed: ParsedOptions): Test {
  const o = generalOptions(parsed);
  const backend = backendNamed(o.backend)!;
  const named = o.client ?? backend.defaultClient;
  // An adapter's backends are known once its module is loaded (preflight).
  const adapter = isAdapterPath(named);
  const client = adapter ? adapterPath(named) : named;
  if (!adapter && !CLIENTS[named])
    throw new BadInput(`--client: unknown value ${JSON.stringify(named)}; choose from ${Object.keys(CLIENTS).join(", ")}, or give the path of an adapter module (./my-lock.ts) or of an adapter program's manifest (./my-lock.adapter.json)`);
  const clientKind = adapter ? undefined : CLIENTS[named];
  const nemeses = nemesesOf(o.nemesis);
  const deploy: DeployName = o.deploy;
  // The rules that need only the options and the parts they name, before anything is made of them.
  checkParts({ options: parsed, backend, client, clientKind, nemeses, deploy });

  const concurrency = o.concurrency;
  const given = o.toxiproxy === undefined ? null : toxiproxyUrl(o.toxiproxy, "--toxiproxy");
  const portBase = o["port-base"];
  if (portBase !== 0 && portBase < 1024) throw new BadInput(`--port-base must be 0 (free ports) or at least 1024, got ${portBase}`);
  const metricsPort = o["metrics-port"] ?? null;
  if (metricsPort !== null && metricsPort !== 0 && metricsPort < 1024) throw new BadInput(`--metrics-port must be 0 (a free port) or at least 1024, got ${metricsPort}`);
  const endpoints = o.endpoints;
  const parsedEndpoints = endpoints === undefined || deploy !== "external" ? null : parseEndpoints(endpoints, backend.serverNames, (p) => readFileSync(p, "utf8"));
  // A service that finds its servers otherwise (DynamoDB: the AWS environment) is named only, for now: found by preflight and the run's start.
  const external: ExternalServer[] | null = parsedEndpoints?.servers ?? (deploy === "external" ? backend.serverNames.map((name) => ({ name })) : null);
  const toxiproxyGiven = { given, inEndpoints: parsedEndpoints?.toxiproxy ?? null, endpoints: endpoints ?? null };
  const toxiproxyNamed = given ?? parsedEndpoints?.toxiproxy ?? null;
  // auto: a Toxiproxy the run starts (runner/start-parts.ts), then used as a user's is.
  const toxiproxyAuto = toxiproxyNamed === "auto";
  const toxiproxy = toxiproxyAuto ? null : toxiproxyNamed;
  const behindTheirs = external?.some((s) => s.proxy) ?? false;
  const grudges = o.partition ?? [...(behindTheirs ? WHOLE_SERVER : GRUDGES)];
  const clockTarget: ClockTarget = o["clock-target"] ?? "servers";
  const workloadOptions: WorkloadOptions = {
    ttlMs: o.ttl,
    acquireTimeoutMs: o["acquire-timeout"],
    workMs: o.work,
    pauseMs: o.pause,
    pauseClients: pauseClientsOf(o["pause-clients"], concurrency),
    writesPerHold: o["writes-per-hold"],
    keys: o.keys,
    rate: o.rate,
    staggerMs: o.stagger,
    renew: o.renew,
    pauseAt: o["pause-at"],
    fenceReads: o["fence-reads"],
    ...(o["key-prefix"] !== undefined ? { keyPrefix: o["key-prefix"] } : {}),
    lock: lockOf(o),
    cancelRate: o["cancel-rate"],
  };
  const commandTimeoutMs = o["command-timeout"] ?? Math.max(1000, 3 * workloadOptions.ttlMs);
  // Enough for a client that was waiting for the lock, or frozen mid-hold, to finish
  // its hold once everything is healed.
  const graceMs =
    o.grace !== undefined
      ? o.grace * 1000
      : workloadOptions.acquireTimeoutMs + workloadOptions.pauseMs + workloadOptions.workMs + (workloadOptions.writesPerHold + 2) * commandTimeoutMs + 1000;
  const fencing = o.fence;
  // Each way. Above the TTL, so a holder slowed before its write left sends a write
  // that lands after the lease ran out and after the next holder, who took the lock
  // at expiry, wrote (the jitter, latency / 8, keeps it above); below 1.5 x TTL, so
  // a slow round trip still completes within the default command timeout (3 x TTL).
  const latencyMs = o.latency ?? Math.ceil(1.2 * workloadOptions.ttlMs);
  const workload = WORKLOADS[o.workload];
  const resourceStore = o.resource === "memory" ? undefined : o.resource;
  // An adapter's kinds are known once it is loaded (preflight checks them).
  const clientKinds = clientKind ? (clientKind.kinds ?? {}) : undefined;
  const partitionMode = o["partition-mode"];
  const fenceName = !fencing ? "fence-off" : workloadOptions.fenceReads ? "fence-reads" : "fence-on";
  const kind = workloadOptions.lock.kind === "mutex" ? [] : [workloadOptions.lock.kind === "semaphore" ? `semaphore${workloadOptions.lock.permits}` : workloadOptions.lock.kind];
  const name = [backend.name, workload.name, ...kind, nemeses.length ? nemeses.join("+") : "none", fenceName].join("-");
  const test: Test = {
    name,
    backend,
    backendOptions: ownOptions(parsed, backend),
    client,
    ...(clientKind ? { clientKind } : {}),
    clientOptions: clientOptionsOf(o, parsed, backend, clientKind, adapter, workloadOptions),
    workload,
    nemeses,
    fencing,
    fenceReads: workloadOptions.fenceReads,
    ...(resourceStore ? { resourceStore } : {}),
    model: o.model,
    ...(clientKinds ? { clientKinds } : {}),
    liveness: o.liveness,
    seed: o.seed ?? Math.floor(Math.random() * 2 ** 31),
    timeLimitS: o["time-limit"],
    concurrency,
    workers: Math.min(o.workers, concurrency),
    store: o.store,
    keepData: o["keep-data"],
    portBase,
    metricsPort,
    graceMs,
    commandTimeoutMs,
    workloadOptions,
    toxiproxy,
    ...(toxiproxyAuto ? { toxiproxyAuto: true as const } : {}),
    ...(o.otel ? { otel: true as const } : {}),
    directLinks: o.links === "direct",
    ...(given === null && toxiproxyNamed ? { toxiproxyFrom: `--endpoints ${endpoints}` } : {}),
    nemesisOptions: {
      intervalS: o["nemesis-interval"] ?? nemesisInterval(o["time-limit"]),
      leaseMs: workloadOptions.ttlMs,
      ...faultTimes(o, workloadOptions.ttlMs),
      aim: aimOf(parsed),
      grudges,
      partitionMode,
      latencyMs,
      jitterMs: o.jitter ?? Math.round(latencyMs / 8),
      clockOffsetMs: o["clock-offset"] ?? 2 * workloadOptions.ttlMs,
      clockModes: o["clock-modes"],
      strobePeriodMs: o["strobe-period"],
      clockTarget,
    },
    ...(clockTarget === "clients" ? { workerClocks: true } : {}),
    serverOptions: {
      skewableClocks: clockTarget === "servers" && nemeses.some((n) => nemesisNamed(n)?.needs === "clock"),
      deploy,
      external,
      pauseMode: o["pause-mode"],
      // Members meet on their network when asked; else through peer proxies, which carry our toxics only when a nemesis of the run cuts members.
      // An external cluster's members are not ours: they talk to each other directly, and nothing of theirs goes through a toxic of ours.
      memberPartitions: external ? "none" : partitionMode === "network" ? "network" : nemeses.some((n) => nemesisNamed(n)?.cutsMembers) ? "proxy" : "none",
    },
  };
  // The rules between what the options made.
  checkTest(test, parsed, toxiproxyGiven);
  return test;
}

/** --nemesis: the nemeses named, or none. */
function nemesesOf(named: readonly string[]): string[] {
  if (!named.includes("none")) return [...named];
  if (named.length > 1) throw new BadInput(`--nemesis none cannot be combined with other nemeses`);
  return [];
}

/** --pause-clients: client ids that exist, or all. */
function pauseClientsOf(given: readonly string[] | undefined, concurrency: number): number[] | "all" {
  if (given === undefined) return "all";
  return given.map((s) => {
    const n = Number(s);
    if (!Number.isInteger(n) || n < 0 || n >= concurrency) throw new BadInput(`--pause-clients: ${JSON.stringify(s)} is not a client id between 0 and ${concurrency - 1}`);
    return n;
  });
}

/** The backend's own options, as given or by their defaults. */
function ownOptions(o: ParsedOptions, backend: Backend): BackendOptions {
  return Object.fromEntries((backend.options ?? []).map((spec) => [spec.name, o[spec.name]]));
}

/** --lock and the options of its kinds. */
function lockOf(o: GeneralOptions): LockSpec {
  const raw = o.lock;
  const m = /^(mutex|reentrant|rw|semaphore)(?::(.*))?$/.exec(raw);
  if (!m) throw new BadInput(`--lock: unknown value ${JSON.stringify(raw)}; choose from mutex, reentrant, rw, semaphore:N (N permits, e.g. semaphore:2)`);
  const kind = m[1] as LockKind;
  let permits = 1;
  if (kind === "semaphore") {
    const n = Number(m[2]);
    if (m[2] === undefined || !/^\d+$/.test(m[2]) || !Number.isSafeInteger(n) || n < 1)
      throw new BadInput(`--lock ${raw}: a semaphore needs its permits as a whole number >= 1, e.g. --lock semaphore:2`);
    permits = n;
  } else if (m[2] !== undefined) throw new BadInput(`--lock ${raw}: only a semaphore takes a number (semaphore:N)`);
  if (kind !== "rw" && o["read-ratio"] !== undefined) throw new BadInput(`--read-ratio applies to --lock rw only, not --lock ${kind}`);
  if (kind !== "reentrant" && o["max-depth"] !== undefined) throw new BadInput(`--max-depth applies to --lock reentrant only, not --lock ${kind}`);
  return { kind, permits, readRatio: o["read-ratio"] ?? 0.5, maxDepth: o["max-depth"] ?? 3 };
}

/**
 * Where faults land: --aim, or its old name --pause-target (stored runs' options
 * keep working); the two must not disagree.
 */
export function aimOf(parsed: ParsedOptions): Aim {
  const o = generalOptions(parsed);
  const aim = o.aim;
  const old = o["pause-target"];
  if (aim !== undefined && old !== undefined && aim !== old) throw new BadInput(`--aim ${aim} and --pause-target ${old} disagree (--pause-target is the old name of --aim)`);
  return aim ?? old ?? "holder";
}

/**
 * The default gap between faults: 2 s, and in proportion for runs under 30 s
 * (0.67 s at 10 s). A fault lasts one to five leases whatever the run's length,
 * so at 2 s a ten-second run of one nemesis got three faults, of two nemeses
 * two of each, and a turn that found the last fault still in force waited a
 * whole gap more; a short run is cheap only if it holds as many faults as it can.
 */
export function nemesisInterval(timeLimitS: number): number {
  return Math.min(2, Math.max(0.5, timeLimitS / 15));
}

/**
 * How long faults last, by default in proportion to the lease, so a run with
 * --ttl 5000 is as searching as one with the default 1000: a pause from half a TTL
 * (shorter than a lease: the holder survives it, as most do) to four (it outlives
 * the lease and a second holder gets in), a partition, latency or clock fault from
 * one to five TTLs, a killed server down for one TTL (long enough for its keys to
 * have expired everywhere else). The 1000 ms default TTL gives the figures these
 * options had before they followed the TTL.
 */
function faultTimes(o: GeneralOptions, ttlMs: number) {
  const ms = (given: number | undefined, times: number) => given ?? Math.max(1, Math.round(times * ttlMs));
  return {
    pauseMinMs: ms(o["pause-min"], 0.5),
    pauseMaxMs: ms(o["pause-max"], 4),
    faultMinMs: ms(o["fault-min"], 1),
    faultMaxMs: ms(o["fault-max"], 5),
    restartDelayMs: o["restart-delay"] ?? ttlMs,
  };
}

/**
 * What the client is told beyond its context: where its fence comes from, a
 * pause between its servers' replies, a connection shared in its worker, and
 * its backend's options that its clients read. The rules (option-rules.ts)
 * refuse the options that would mean nothing to it.
 */
function clientOptionsOf(o: GeneralOptions, parsed: ParsedOptions, backend: Backend, kind: ClientKind | undefined, adapter: boolean, w: WorkloadOptions): ClientOptions {
  const fenceSource: FenceSource | undefined = o["fence-source"];
  const own = Object.fromEntries((backend.options ?? []).filter((spec) => spec.clients && parsed[spec.name] !== undefined).map((spec) => [spec.name, parsed[spec.name]]));
  const options: ClientOptions = {
    ...(kind?.fenceFromMajority ? { fenceSource: fenceSource ?? "max-incr" } : fenceSource !== undefined && (adapter || kind?.fences === false) ? { fenceSource } : {}),
    ...(kind?.pausesBetweenReplies && w.pauseAt === "replies" && w.pauseMs > 0 ? { pauseAfterReplies: { ms: w.pauseMs, clients: w.pauseClients } } : {}),
    ...(o.connections === "per-worker" && kind?.sharesConnection ? { sharedConnection: true } : {}),
    ...(Object.keys(own).length ? { own } : {}),
  };
  return options;
}
