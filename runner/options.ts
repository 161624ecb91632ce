// The options of `npm run test:jepsen`, and how they become a Test: the one
// description of each option, from which --help, defaults and messages come.
import { readFileSync } from "node:fs";
import { BadInput, type OptionSpec, type ParsedOptions } from "../lib/index.ts";
import { parseEndpoints, toxiproxyUrl, CONTROLS_NEEDED, type ExternalServer } from "../cluster/external.ts";
import { BACKENDS } from "./backends.ts";
import type { Test } from "../core/test-definition.ts";
import type { RedisPersistence } from "../backends/redis/server.ts";
import { CLIENTS, FENCE_SOURCES, adapterPath, isAdapterPath, type ClientOptions, type FenceSource, type LockKind, type LockKinds } from "../clients/index.ts";
import { WORKLOADS, type LockSpec, type WorkloadOptions } from "../workloads/index.ts";
import { NEMESES, GRUDGES, WHOLE_SERVER, CLOCK_MODES, CLOCK_TARGETS, AIMS, type Aim, type ClockMode, type ClockTarget } from "../nemesis/index.ts";

/** The backends whose members talk to each other, which --partition-mode network cuts apart. */
const MEMBER_BACKENDS = ["etcd", "zookeeper"];

export const TEST_OPTIONS: readonly OptionSpec[] = [
  { name: "backend", kind: "string", default: "redis", choices: Object.keys(BACKENDS), help: "lock service to test" },
  { name: "client", kind: "string", default: undefined, defaultText: "the backend's own", help: `lock client: ${Object.keys(CLIENTS).join(", ")}, or the path of an adapter of your own: a module (./my-lock.ts; see examples/redis-lock-adapter.ts) or an adapter program's manifest in any language (./my-lock.adapter.json; see docs/adapter-protocol.md)` },
  { name: "workload", kind: "string", default: "fenced-write", choices: Object.keys(WORKLOADS), help: "what clients do" },
  { name: "lock", kind: "string", default: "mutex", help: "the kind of lock: mutex, reentrant (a hold re-enters to a random depth and releases back down), rw (readers share, a writer excludes) or semaphore:N (N holders at once)" },
  { name: "read-ratio", kind: "number", default: undefined, defaultText: "0.5", min: 0, max: 1, help: "--lock rw: the share of acquires that ask to read" },
  { name: "max-depth", kind: "int", default: undefined, defaultText: "3", min: 2, max: 64, help: "--lock reentrant: the deepest re-entry of a hold (each hold goes to a random depth from 1 to this)" },
  { name: "cancel-rate", kind: "number", default: 0, min: 0, max: 1, help: "the share of waiting acquires withdrawn before their timeout (the client must be able to cancel a wait)" },
  { name: "liveness", kind: "string", default: "lenient", choices: ["lenient", "strict"], help: "strict: a stuck-lock finding (waiters, and no hold, for longer than the TTL plus the command timeout) makes the run invalid" },
  { name: "nemesis", kind: "list", default: ["pause"], choices: [...Object.keys(NEMESES), "none"], help: "faults to inject, comma-separated, or none" },
  { name: "fence", kind: "on-off", default: true, help: "the resource refuses writes with a stale fencing token" },
  { name: "fence-source", kind: "string", default: undefined, defaultText: "max-incr", choices: FENCE_SOURCES, help: "redlock and lockserver-majority: where a hold's fence comes from: none; the largest of the granting majority's counters (Redlock: INCR on each; the lock servers: each grant's fence; unsafe, F2); one counter alone, on redis-1 or lockserver-1 (a single point of failure)" },
  { name: "release-gap", kind: "int", default: undefined, defaultText: "0", min: 0, help: "--client redis-unsafe-release: ms between its GET and its DEL (lands T1 on demand)" },
  { name: "redlock-check-validity", kind: "on-off", default: undefined, defaultText: "on", help: "--client redlock refuses a quorum that came back after the lease's validity (off: node-redlock 5's defect, K5)" },
  { name: "resource", kind: "string", default: "memory", choices: ["memory", "postgres", "dynamodb"], help: "where the protected resource keeps each key's value and fence, and so who decides a write: its own memory, a Postgres of its own (one conditional UPDATE ... WHERE fence < $1 per write), or a dynalite of its own (one conditional UpdateItem per write)" },
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
  { name: "pause-at", kind: "string", default: "acquire", choices: ["acquire", "read", "replies", "reenter", "release"], help: "where --pause is taken: after acquiring, between the read and the write (counter), inside a Redlock acquire between the node replies and the decision (--client redlock, K5), after each re-entry is granted (--lock reentrant, before that depth's work and write: R2), or just before the hold's release (after a reentrant hold's inner releases, as the outer block's own work after its inner block returns: R1)" },
  { name: "writes-per-hold", kind: "int", default: 1, min: 1, help: "writes to the resource per hold" },
  { name: "renew", kind: "on-off", default: false, help: "renew the lease every ttl/3 while holding (the watchdog)" },
  { name: "stagger", kind: "int", default: 0, min: 0, help: "client i starts i*stagger ms after the run starts" },
  { name: "nemesis-interval", kind: "number", default: 2, min: 0.05, help: "seconds between faults (jittered +-50%)" },
  { name: "aim", kind: "string", default: undefined, defaultText: "holder", choices: AIMS, help: "where faults land: holder (a pause or latency on a worker whose client holds a lock, a kill, clock jump or server pause on a node that granted the hold, a partition that leaves the holder's worker without the lock service) or random" },
  { name: "pause-target", kind: "string", default: undefined, defaultText: "holder", choices: AIMS, help: "the old name of --aim" },
  { name: "pause-min", kind: "int", default: undefined, defaultText: "ttl / 2", min: 1, help: "shortest SIGSTOP in ms" },
  { name: "pause-max", kind: "int", default: undefined, defaultText: "4 x ttl", min: 1, help: "longest SIGSTOP in ms" },
  { name: "grace", kind: "number", default: undefined, defaultText: "from ttl, pause and timeouts", min: 0, help: "seconds clients get to finish after the heal" },
  { name: "partition", kind: "list", default: undefined, defaultText: `${GRUDGES.join(",")} (behind proxies of yours: ${WHOLE_SERVER.join(",")})`, choices: GRUDGES, help: "grudges a partition picks from" },
  { name: "partition-mode", kind: "string", default: "timeout", choices: ["timeout", "reset", "network"], help: "cut links drop data silently (timeout) or refuse connections (reset); network (--deploy docker, etcd or zookeeper): links as timeout, and the members cut off the run's container network instead of through the fault proxy (ZooKeeper's members in containers are always cut off that way)" },
  { name: "fault-min", kind: "int", default: undefined, defaultText: "ttl", min: 1, help: "shortest partition, latency or clock fault in ms" },
  { name: "fault-max", kind: "int", default: undefined, defaultText: "5 x ttl", min: 1, help: "longest partition, latency or clock fault in ms" },
  { name: "latency", kind: "int", default: undefined, defaultText: "1.2 x ttl", min: 1, help: "ms of latency the latency nemesis adds each way" },
  { name: "jitter", kind: "int", default: undefined, defaultText: "latency / 8", min: 0, help: "ms of jitter on that latency" },
  { name: "clock-offset", kind: "int", default: undefined, defaultText: "2 x ttl", min: 1, help: "ms a clock fault moves a wall clock, forward or back at random" },
  { name: "clock-target", kind: "string", default: undefined, defaultText: "servers", choices: CLOCK_TARGETS, help: "whose wall clocks --nemesis clock moves: the lock servers', or the client worker processes' and their adapter programs' (a lease judged by the client's clock; any backend; the history's times stay on the monotonic clock)" },
  { name: "clock-modes", kind: "list", default: [...CLOCK_MODES], choices: CLOCK_MODES, help: "clock faults to pick from: bump (one jump) or strobe (flip back and forth)" },
  { name: "strobe-period", kind: "int", default: 100, min: 1, help: "ms between the flips of a strobing clock" },
  { name: "restart-delay", kind: "int", default: undefined, defaultText: "ttl", min: 0, help: "ms a killed server stays down before it is started again" },
  { name: "pg-durable", kind: "flag", default: false, help: "--backend postgres: fsync on. Off (the default) loses nothing to a SIGKILL of the server (the kernel holds its writes), only to a crash of the machine" },
  { name: "pg-pooler", kind: "string", default: "none", choices: ["none", "pgbouncer"], help: "--backend postgres: clients reach the server directly (through their proxies), or through pgbouncer in transaction pooling with one server connection (P1: session advisory locks break)" },
  { name: "dynamo-persistence", kind: "string", default: undefined, defaultText: "disk", choices: ["disk", "memory"], help: "--backend dynamodb: what a killed dynalite remembers: its tables on disk (LevelDB in the run directory), or nothing (memory: it comes back empty, the lock table is made again and the fences start over)" },
  { name: "lockserver-persistence", kind: "string", default: undefined, defaultText: "always", choices: ["none", "always"], help: "--backend lockserver: what a killed lock server remembers: its journal of grants, renewals and releases, fsynced before each answer (always), or nothing (none: it comes back with no holders and every fence counter at 0)" },
  { name: "redis-persistence", kind: "string", default: "none", choices: ["none", "everysec", "always"], help: "Redis AOF fsync policy: what a killed node remembers (none: nothing)" },
  { name: "deploy", kind: "string", default: "local", choices: ["local", "docker", "external"], help: "where the lock servers run: local child processes, containers of a Docker API engine (DOCKER_HOST, /var/run/docker.sock, Podman's socket), or a cluster of yours (--endpoints)" },
  { name: "endpoints", kind: "string", default: undefined, help: "--deploy external: the servers, host:port or name=host:port comma-separated, or a JSON file with control commands, a Toxiproxy and proxies of yours (docs/clusters.md); --backend dynamodb may leave it out and take the AWS environment's endpoint, --backend postgres PGHOST and PGPORT" },
  { name: "key-prefix", kind: "string", default: undefined, defaultText: "fencecheck:<run>: with --deploy external, else none", help: "every lock key's name starts with this; a run's keys are deleted at the end with --deploy external (DynamoDB: the run's table, named after it, is made and deleted; ZooKeeper: its nodes /fencecheck/locks/<prefix>*; Postgres: the run's schema, named after it)" },
  { name: "pause-mode", kind: "string", default: "signal", choices: ["signal", "freeze"], help: "how pause-server holds a server: SIGSTOP to its process, or (--deploy docker) the cgroup freezer (docker pause)" },
  { name: "toxiproxy", kind: "string", default: undefined, defaultText: "our own fault proxy", help: "URL of a Toxiproxy to make the links in, e.g. http://127.0.0.1:8474" },
  { name: "links", kind: "string", default: "proxy", choices: ["proxy", "direct"], help: "how workers reach the servers and the resource: through the fault proxy (partitions and latency need it), or directly, for measurements without the proxy's cost" },
  { name: "connections", kind: "string", default: "per-client", choices: ["per-client", "per-worker"], help: "etcd clients: each logical client its own etcd3 client and connections, as separate programs have, or one shared by the clients of a worker, as one program's goroutines share theirs (for many contenders: a thousand gRPC clients stall a worker)" },
  { name: "command-timeout", kind: "int", default: undefined, defaultText: "3 x ttl, at least 1000", min: 1, help: "ms without an answer before an operation's outcome is unknown (info)" },
  { name: "seed", kind: "int", default: undefined, defaultText: "random, printed", min: 0, max: 2 ** 31 - 1, help: "the same seed gives the same schedule of operations and faults" },
  { name: "store", kind: "string", default: "histories", help: "directory of the run store" },
  { name: "keep-data", kind: "flag", default: false, help: "keep the servers' data directories (data/) in the run directory; by default they are removed at the end (etcd preallocates 128 MB of WAL per member)" },
  { name: "port-base", kind: "int", default: 0, min: 0, max: 65000, defaultText: "free ports", help: "servers take consecutive ports from here" },
  { name: "metrics-port", kind: "int", default: undefined, defaultText: "off", min: 0, max: 65535, help: "serve every worker's, the fault proxy's and the resource's Prometheus metrics at http://127.0.0.1:PORT/metrics during the run (0: a free port, printed at start)" },
  { name: "model", kind: "string", default: "lease", choices: ["lease", "strict"], help: "strict: the model check's strict-mutex-violation makes a run invalid (leases break a strict mutex by design)" },
];

export function buildTest(o: ParsedOptions): Test {
  const backend = BACKENDS[o.backend as string];
  const named = (o.client as string | undefined) ?? backend.defaultClient;
  // An adapter's backends are known once its module is loaded (preflight).
  const client = isAdapterPath(named) ? adapterPath(named) : named;
  if (!isAdapterPath(named)) {
    if (!CLIENTS[named]) throw new BadInput(`--client: unknown value ${JSON.stringify(named)}; choose from ${Object.keys(CLIENTS).join(", ")}, or give the path of an adapter module (./my-lock.ts) or of an adapter program's manifest (./my-lock.adapter.json)`);
    if (!backend.clients.includes(named))
      throw new BadInput(`--client ${named} does not work with --backend ${backend.name}; choose from ${backend.clients.join(", ")}`);
  }
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
  const given = o.toxiproxy === undefined ? null : toxiproxyUrl(o.toxiproxy, "--toxiproxy");
  const portBase = o["port-base"] as number;
  if (portBase !== 0 && portBase < 1024) throw new BadInput(`--port-base must be 0 (free ports) or at least 1024, got ${portBase}`);
  const metricsPort = (o["metrics-port"] as number | undefined) ?? null;
  if (metricsPort !== null && metricsPort !== 0 && metricsPort < 1024) throw new BadInput(`--metrics-port must be 0 (a free port) or at least 1024, got ${metricsPort}`);
  const deploy = o.deploy as "local" | "docker" | "external";
  const cannot = deploy === "local" ? undefined : backend.cannot?.[deploy];
  if (cannot) throw new BadInput(`--deploy ${deploy} does not work with --backend ${backend.name}: ${cannot}`);
  if (o["pg-durable"] && backend.name !== "postgres") throw new BadInput(`--pg-durable applies to --backend postgres only, not ${backend.name}`);
  const dynamoPersistence = o["dynamo-persistence"] as "disk" | "memory" | undefined;
  if (dynamoPersistence && backend.name !== "dynamodb") throw new BadInput(`--dynamo-persistence applies to --backend dynamodb only, not ${backend.name}`);
  const lockServerPersistence = o["lockserver-persistence"] as "none" | "always" | undefined;
  if (lockServerPersistence && backend.name !== "lockserver") throw new BadInput(`--lockserver-persistence applies to --backend lockserver only, not ${backend.name}`);
  const pooled = o["pg-pooler"] === "pgbouncer";
  if (pooled && backend.name !== "postgres") throw new BadInput(`--pg-pooler applies to --backend postgres only, not ${backend.name}`);
  const atServer = (o.nemesis as string[]).filter((n) => n === "kill" || n === "pause-server");
  if (pooled && atServer.length)
    throw new BadInput(`--nemesis ${atServer.join(",")} with --pg-pooler pgbouncer: the clients reach pgbouncer-1, and these faults aim at the server they reach; drop one or the other`);
  const endpoints = o.endpoints as string | undefined;
  // A service that finds its servers otherwise (DynamoDB: the AWS environment) takes --endpoints or not.
  const foundOtherwise = deploy === "external" && endpoints === undefined && backend.external?.serversFrom !== undefined;
  if (deploy === "external" && endpoints === undefined && !foundOtherwise)
    throw new BadInput(`--deploy external needs --endpoints: the servers of your ${backend.name} (${backend.serverNames.join(", ")})`);
  if (dynamoPersistence && deploy === "external") throw new BadInput(`--dynamo-persistence says what the run's own dynalite keeps; with --deploy external the DynamoDB is yours`);
  if (o["pg-durable"] && deploy === "external") throw new BadInput(`--pg-durable says what the run's own Postgres keeps; with --deploy external the Postgres is yours`);
  if (pooled && deploy === "external")
    throw new BadInput(`--pg-pooler starts pgbouncer in front of the run's own Postgres; with --deploy external give your pooler's address as --endpoints (or PGHOST and PGPORT)`);
  if (deploy !== "external" && endpoints !== undefined) throw new BadInput(`--endpoints names servers of your own, for --deploy external; with --deploy ${deploy} fencecheck starts its own`);
  const clockTarget = clockTargetOf(o, nemeses);
  const parsed = endpoints === undefined ? null : parseEndpoints(endpoints, backend.serverNames, (p) => readFileSync(p, "utf8"));
  // Found later (preflight, the run's start): named only, for now.
  const external: ExternalServer[] | null = parsed?.servers ?? (foundOtherwise ? backend.serverNames.map((name) => ({ name })) : null);
  if (given && parsed?.toxiproxy && given !== parsed.toxiproxy)
    throw new BadInput(`--toxiproxy ${given} and the Toxiproxy of --endpoints ${endpoints} ("toxiproxy": ${parsed.toxiproxy}) differ; give one, or the same in both`);
  const toxiproxy = given ?? parsed?.toxiproxy ?? null;
  const behindTheirs = external?.filter((s) => s.proxy) ?? [];
  if (behindTheirs.length && !toxiproxy)
    throw new BadInput(`--endpoints ${endpoints}: ${behindTheirs[0].name} is behind your proxy ${JSON.stringify(behindTheirs[0].proxy)}, and no Toxiproxy is given to find it on ("toxiproxy" in the file, or --toxiproxy URL)`);
  const grudges = (o.partition as string[] | undefined) ?? [...(behindTheirs.length ? WHOLE_SERVER : GRUDGES)];
  if (behindTheirs.length) sharedProxyNemeses(nemeses, grudges, behindTheirs.map((s) => `${s.name} (${s.proxy})`));
  if (external) {
    for (const n of nemeses) {
      if (n === "clock" && clockTarget === "servers")
        throw new BadInput(`--nemesis clock cannot move the clocks of an external cluster's servers (--clock-target clients moves the clients' clocks instead)`);
      for (const verb of CONTROLS_NEEDED[n] ?? []) {
        const without = external.find((s) => !s.control?.[verb]);
        if (without) throw new BadInput(`--nemesis ${n} needs a "${verb}" control command for every server, and ${without.name} has none (give them in the --endpoints JSON file)`);
      }
    }
  }
  const direct = o.links === "direct";
  if (direct) {
    const needs = nemeses.filter((n) => NEMESES[n].aims === "links");
    if (needs.length) throw new BadInput(`--links direct: --nemesis ${needs.join(",")} works on the proxied links, and direct links have none (drop it, or use --links proxy)`);
    if (toxiproxy) throw new BadInput(`--links direct makes no links, so a Toxiproxy (${given ? "--toxiproxy" : `--endpoints ${endpoints}`}) has nothing to do; give one or the other`);
  }
  const pauseMode = o["pause-mode"] as "signal" | "freeze";
  const partitionMode = o["partition-mode"] as "timeout" | "reset" | "network";
  if (pauseMode === "freeze" && deploy !== "docker") throw new BadInput(`--pause-mode freeze needs --deploy docker (the freezer is a container's cgroup); local servers are paused with SIGSTOP`);
  if (partitionMode === "network") {
    if (deploy !== "docker") throw new BadInput(`--partition-mode network needs --deploy docker: it cuts members off the run's container network`);
    if (!MEMBER_BACKENDS.includes(backend.name))
      throw new BadInput(`--partition-mode network cuts the members of ${MEMBER_BACKENDS.join(" or ")} off each other; --backend ${backend.name} has no member-to-member traffic (use timeout or reset)`);
  }
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
    pauseAt: o["pause-at"] as WorkloadOptions["pauseAt"],
    fenceReads: o["fence-reads"] as boolean,
    ...(o["key-prefix"] !== undefined ? { keyPrefix: o["key-prefix"] as string } : {}),
    lock: lockOf(o),
    cancelRate: o["cancel-rate"] as number,
  };
  const faults = faultTimes(o, workloadOptions.ttlMs);
  const commandTimeoutMs = (o["command-timeout"] as number | undefined) ?? Math.max(1000, 3 * workloadOptions.ttlMs);
  // Enough for a client that was waiting for the lock, or frozen mid-hold, to finish
  // its hold once everything is healed.
  const graceMs =
    o.grace !== undefined
      ? (o.grace as number) * 1000
      : workloadOptions.acquireTimeoutMs + workloadOptions.pauseMs + workloadOptions.workMs + (workloadOptions.writesPerHold + 2) * commandTimeoutMs + 1000;
  const fencing = o.fence as boolean;
  // Each way. Above the TTL, so a holder slowed before its write left sends a write
  // that lands after the lease ran out and after the next holder, who took the lock
  // at expiry, wrote (the jitter, latency / 8, keeps it above); below 1.5 x TTL, so
  // a slow round trip still completes within the default command timeout (3 x TTL).
  const latencyMs = (o.latency as number | undefined) ?? Math.ceil(1.2 * workloadOptions.ttlMs);
  const workload = WORKLOADS[o.workload as string];
  for (const n of nemeses) {
    // An ability of the backend's servers: a nemesis aimed at the workers needs none of them.
    const need = (NEMESES[n].aimsAt?.({ clockTarget }) ?? NEMESES[n].aims) === "workers" ? undefined : NEMESES[n].needs;
    if (need && !(backend.abilities ?? []).includes(need))
      throw new BadInput(`--nemesis ${n} does not work with --backend ${backend.name}: ${backend.lacks?.[need] ?? `its servers cannot ${need === "clock" ? "have their clocks moved" : "be killed and restarted"}`}`);
  }
  if (workloadOptions.pauseAt === "reenter" && workloadOptions.lock.kind !== "reentrant") throw new BadInput(`--pause-at reenter needs --lock reentrant (a hold that enters again), not --lock ${workloadOptions.lock.kind}`);
  for (const [flag, used] of [["--pause-at read", workloadOptions.pauseAt === "read"], ["--fence-reads", workloadOptions.fenceReads]] as const)
    if (used && !workload.reads) throw new BadInput(`${flag} needs a workload that reads the resource (counter), not ${workload.name}`);
  const resourceStore = o.resource === "postgres" || o.resource === "dynamodb" ? (o.resource as "postgres" | "dynamodb") : undefined;
  const storeName = resourceStore === "dynamodb" ? "DynamoDB" : "Postgres";
  // An adapter's kinds are known once it is loaded (preflight checks them).
  const clientKinds = isAdapterPath(client) ? undefined : (CLIENTS[client]?.kinds ?? {});
  if (clientKinds) lockKindsOffered(client, clientKinds, workloadOptions, workload.name);
  if (resourceStore && workloadOptions.lock.kind !== "mutex")
    throw new BadInput(`--lock ${workloadOptions.lock.kind} needs --resource memory: the ${storeName} resource's table keeps a mutex's rule only (one fence per key, the highest written)`);
  if (resourceStore && workloadOptions.fenceReads) throw new BadInput(`--fence-reads is not supported with --resource ${resourceStore}: its table keeps one fence per key, the highest written`);
  const fenceName = !fencing ? "fence-off" : workloadOptions.fenceReads ? "fence-reads" : "fence-on";
  const kind = workloadOptions.lock.kind === "mutex" ? [] : [workloadOptions.lock.kind === "semaphore" ? `semaphore${workloadOptions.lock.permits}` : workloadOptions.lock.kind];
  const name = [backend.name, workload.name, ...kind, nemeses.length ? nemeses.join("+") : "none", fenceName].join("-");
  return {
    name,
    backend,
    client,
    clientOptions: clientOptions(o, backend.name, client, fencing, workloadOptions),
    workload,
    nemeses,
    fencing,
    fenceReads: workloadOptions.fenceReads,
    ...(resourceStore ? { resourceStore } : {}),
    model: o.model as "lease" | "strict",
    ...(clientKinds ? { clientKinds } : {}),
    liveness: o.liveness as "lenient" | "strict",
    seed: (o.seed as number | undefined) ?? Math.floor(Math.random() * 2 ** 31),
    timeLimitS: o["time-limit"] as number,
    concurrency,
    workers,
    store: o.store as string,
    keepData: o["keep-data"] as boolean,
    portBase,
    metricsPort,
    graceMs,
    commandTimeoutMs,
    workloadOptions,
    toxiproxy,
    directLinks: direct,
    ...(given === null && toxiproxy ? { toxiproxyFrom: `--endpoints ${endpoints}` } : {}),
    nemesisOptions: {
      intervalS: o["nemesis-interval"] as number,
      ...faults,
      aim: aimOf(o),
      grudges,
      partitionMode,
      latencyMs,
      jitterMs: (o.jitter as number | undefined) ?? Math.round(latencyMs / 8),
      clockOffsetMs: (o["clock-offset"] as number | undefined) ?? 2 * workloadOptions.ttlMs,
      clockModes: o["clock-modes"] as ClockMode[],
      strobePeriodMs: o["strobe-period"] as number,
      clockTarget,
    },
    ...(clockTarget === "clients" ? { workerClocks: true } : {}),
    serverOptions: {
      redisPersistence: o["redis-persistence"] as RedisPersistence,
      skewableClocks: clockTarget === "servers" && nemeses.some((n) => NEMESES[n].needs === "clock"),
      deploy,
      external,
      pauseMode,
      memberPartitions: partitionMode === "network" ? "network" : "proxy",
      ...(o["pg-durable"] ? { pgDurable: true } : {}),
      ...(pooled ? { pgPooler: "pgbouncer" as const } : {}),
      ...(dynamoPersistence ? { dynamoPersistence } : {}),
      ...(lockServerPersistence ? { lockServerPersistence } : {}),
    },
  };
}

/**
 * Whose clocks the clock nemesis moves (--clock-target). Given without
 * --nemesis clock it would move nothing: refused, as other options that would
 * mean nothing are.
 */
function clockTargetOf(o: ParsedOptions, nemeses: readonly string[]): ClockTarget {
  const given = o["clock-target"] as ClockTarget | undefined;
  if (given !== undefined && !nemeses.includes("clock"))
    throw new BadInput(`--clock-target ${given} says whose clocks --nemesis clock moves, and this run has no clock nemesis (--nemesis ${nemeses.length ? nemeses.join(",") : "none"})`);
  return given ?? "servers";
}

/** --lock and the options of its kinds. */
function lockOf(o: ParsedOptions): LockSpec {
  const raw = o.lock as string;
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
  const given = (name: string): boolean => o[name] !== undefined;
  if (kind !== "rw" && given("read-ratio")) throw new BadInput(`--read-ratio applies to --lock rw only, not --lock ${kind}`);
  if (kind !== "reentrant" && given("max-depth")) throw new BadInput(`--max-depth applies to --lock reentrant only, not --lock ${kind}`);
  return { kind, permits, readRatio: (o["read-ratio"] as number | undefined) ?? 0.5, maxDepth: (o["max-depth"] as number | undefined) ?? 3 };
}

/** The lock kind and cancellation asked for, against what the client offers (its registry entry, or an adapter's own `kinds`). */
export function lockKindsOffered(client: string, kinds: LockKinds, w: WorkloadOptions, workload: string): void {
  const offered = ["mutex", ...(kinds.reentrant ? ["reentrant"] : []), ...(kinds.rw ? ["rw"] : []), ...(kinds.semaphore ? ["semaphore:N"] : [])];
  const what = `--client ${client} offers ${offered.join(", ")}${kinds.cancel ? ", and cancels a wait" : ", and cannot cancel a wait"}`;
  const kind = w.lock.kind;
  if (kind !== "mutex" && !(kind === "semaphore" ? kinds.semaphore : kind === "rw" ? kinds.rw : kinds.reentrant))
    throw new BadInput(`--lock ${kind === "semaphore" ? `semaphore:${w.lock.permits}` : kind}: ${what}`);
  if (w.cancelRate > 0 && !kinds.cancel) throw new BadInput(`--cancel-rate ${w.cancelRate}: ${what}`);
  if (w.cancelRate > 0 && w.acquireTimeoutMs === 0) throw new BadInput(`--cancel-rate ${w.cancelRate} with --acquire-timeout 0: an acquire that does not wait has no wait to withdraw`);
  if (kind !== "mutex" && workload !== "fenced-write") throw new BadInput(`--lock ${kind} needs --workload fenced-write (the ${workload} workload is a mutex's)`);
}

/**
 * Behind a proxy of the user's every worker reaches the server through that one
 * proxy, so a fault there reaches all of them: a partition can cut the server off
 * from every worker (isolate-one, isolate-leader) but not from some, and latency
 * slows every worker's requests to it (the history's events say so). Pauses, kills
 * and server pauses do not go through links.
 */
function sharedProxyNemeses(nemeses: readonly string[], grudges: readonly string[], behind: readonly string[]): void {
  if (!nemeses.includes("partition")) return;
  const split = grudges.filter((g) => !(WHOLE_SERVER as readonly string[]).includes(g));
  if (split.length)
    throw new BadInput(
      `--partition ${split.join(",")} cuts some workers off from a server and not others, and ${behind.join(", ")} ${behind.length === 1 ? "is" : "are"} behind a proxy of yours that every worker shares; ` +
        `give --partition ${WHOLE_SERVER.join(",")} (a server cut off from every worker), or leave "proxy" out so that fencecheck makes a proxy per worker`,
    );
}

/**
 * Where faults land: --aim, or its old name --pause-target (stored runs' options
 * keep working); the two must not disagree.
 */
export function aimOf(o: ParsedOptions): Aim {
  const aim = o.aim as Aim | undefined;
  const old = o["pause-target"] as Aim | undefined;
  if (aim !== undefined && old !== undefined && aim !== old) throw new BadInput(`--aim ${aim} and --pause-target ${old} disagree (--pause-target is the old name of --aim)`);
  return aim ?? old ?? "holder";
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
function faultTimes(o: ParsedOptions, ttlMs: number) {
  const ms = (name: string, times: number) => (o[name] as number | undefined) ?? Math.max(1, Math.round(times * ttlMs));
  const t = {
    pauseMinMs: ms("pause-min", 0.5),
    pauseMaxMs: ms("pause-max", 4),
    faultMinMs: ms("fault-min", 1),
    faultMaxMs: ms("fault-max", 5),
    restartDelayMs: (o["restart-delay"] as number | undefined) ?? ttlMs,
  };
  const shown = (name: string, v: number) => `--${name} (${v}${o[name] === undefined ? ", from --ttl" : ""})`;
  if (t.faultMinMs > t.faultMaxMs) throw new BadInput(`${shown("fault-min", t.faultMinMs)} must not exceed ${shown("fault-max", t.faultMaxMs)}`);
  if (t.pauseMinMs > t.pauseMaxMs) throw new BadInput(`${shown("pause-min", t.pauseMinMs)} must not exceed ${shown("pause-max", t.pauseMaxMs)}`);
  return t;
}

/** The clients that can share one etcd3 client per worker (--connections per-worker). */
const ETCD_CLIENTS = ["etcd-queue", "etcd-queue-cancel-delete", "etcd-rw", "etcd-rw-writer-naive", "etcd3-lock"];

/** Options only some clients read; refused where they would mean nothing. */
function clientOptions(o: ParsedOptions, backend: string, client: string, fencing: boolean, w: WorkloadOptions): ClientOptions {
  const releaseGapMs = o["release-gap"] as number | undefined;
  if (releaseGapMs !== undefined && client !== "redis-unsafe-release")
    throw new BadInput(`--release-gap applies to --client redis-unsafe-release only (the others release in one step), not --client ${client}`);
  if (w.pauseAt === "replies" && client !== "redlock")
    throw new BadInput(`--pause-at replies applies to --client redlock only (the npm redlock packages cannot be paused inside an acquire), not --client ${client}`);
  const fenceSource = o["fence-source"] as FenceSource | undefined;
  const checkValidity = o["redlock-check-validity"] as boolean | undefined;
  // An adapter, or a shipped client whose lock issues no fences, may take them from Redis counters.
  const adapter = isAdapterPath(client) || CLIENTS[client]?.fences === false;
  // An adapter whose lock issues no fences may take them from Redis counters (preflight checks it issues none).
  if (CLIENTS[client]?.fences === false && fencing && (fenceSource === undefined || fenceSource === "none"))
    throw new BadInput(`--client ${client} issues no fencing tokens, so with --fence on the resource would refuse every write as unfenced; use --fence off, or take fences from Redis counters with --fence-source single (or max-incr)`);
  if (adapter && fenceSource !== undefined && backend !== "redis" && backend !== "redlock")
    throw new BadInput(`--fence-source takes fences from Redis counters: with --client ${client} it needs --backend redis or redlock, not ${backend}`);
  // The clients that make one fence out of several servers' counters.
  const majority = backend === "redlock" || client === "lockserver-majority";
  if (!adapter && fenceSource !== undefined && !majority)
    throw new BadInput(`--fence-source applies to --backend redlock and --client lockserver-majority only; --client ${client} of --backend ${backend} issues its own fences`);
  if (checkValidity !== undefined && client !== "redlock")
    throw new BadInput(`--redlock-check-validity applies to --client redlock only (node-redlock never checks validity, node-redlock-4 always does), not --client ${client}`);
  const perWorker = o.connections === "per-worker";
  if (perWorker && !ETCD_CLIENTS.includes(client))
    throw new BadInput(`--connections per-worker applies to the etcd clients (${ETCD_CLIENTS.join(", ")}) only, not --client ${client}: the others keep a connection each`);
  if (adapter) return fenceSource === undefined ? {} : { fenceSource };
  if (!majority) return { ...(releaseGapMs === undefined ? {} : { releaseGapMs }), ...(perWorker ? { sharedConnection: true } : {}) };
  const options: ClientOptions = backend === "redlock" ? { fenceSource: fenceSource ?? "max-incr", checkValidity: checkValidity ?? true } : { fenceSource: fenceSource ?? "max-incr" };
  if (w.pauseAt === "replies" && w.pauseMs > 0) options.pauseAfterReplies = { ms: w.pauseMs, clients: w.pauseClients };
  if (options.fenceSource === "none" && fencing)
    throw new BadInput(
      "--fence-source none with --fence on: holds would carry no fencing token, so the resource could only compare owners, and would refuse every write as unfenced; use --fence off, or --fence-source max-incr or single",
    );
  return options;
}
