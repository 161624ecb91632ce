// Bringing up what a run tests, in order: the resource, the fault proxy, the lock
// servers, one proxied link per worker and server (or a proxy of the user's that
// every worker shares, cluster/links.ts), and the workers with their clients.
// Everything started is known to the process group, so the runner's teardown (or
// the reaper) stops it whatever happens here.
import { basename, join } from "node:path";
import { externalCluster } from "../cluster/external.ts";
import { placeServers } from "../cluster/external-proxies.ts";
import type { ProcessGroup } from "../cluster/processes.ts";
import type { PortPlan } from "../cluster/ports.ts";
import type { ServerNode } from "../cluster/redis.ts";
import { Links, type Link } from "../cluster/links.ts";
import type { Cluster } from "../cluster/cluster.ts";
import { startResource, type ResourceHandle } from "../resource/index.ts";
import { spawnProxyServer } from "../proxy/index.ts";
import { RUN_FILES, type UnindexedEvent } from "../store/index.ts";
import type { Endpoint } from "../clients/index.ts";
import { spawnWorker, workerClockFile, type WorkerHandle } from "./workers.ts";
import { faketimePreload, writeOffset } from "../cluster/faketime.ts";
import type { Test } from "./test.ts";
import type { LockSpec } from "../workloads/index.ts";
import { localDeployment, type Deployment } from "../cluster/deployment.ts";

export interface System {
  resource: ResourceHandle;
  cluster: Cluster;
  nodes: ServerNode[];
  /** null with --links direct. */
  links: Links | null;
  workers: WorkerHandle[];
  /** Client ids per worker, in worker order. */
  assignment: number[][];
  /** The run's services of our own that serve Prometheus text at <url>/metrics: the fault proxy (unless --toxiproxy) and the resource. */
  metricsServices: Array<{ name: string; url: string }>;
  /** Move a worker's wall clock to real time + offsetMs; absent unless its workers run under libfaketime (--clock-target clients). */
  skewWorkerClock?(name: string, offsetMs: number): Promise<void>;
  /** Stops what the process group does not own (the proxies of a shared Toxiproxy). */
  close(): Promise<void>;
}

export interface SystemContext {
  test: Test;
  group: ProcessGroup;
  ports: PortPlan;
  runDir: string;
  t0: bigint;
  record: (events: UnindexedEvent[]) => void;
  /** A worker's warning for the console. */
  warn: (worker: string, message: string) => void;
  /** Called as each part comes up, so run.json can say what there was if a later step fails. */
  started: (what: string, info: unknown) => void;
}

/** The worker a logical client lives in: clients are dealt out in turn. */
export const workerOfClient = (client: number, workers: number): string => `worker-${(client % workers) + 1}`;

const endpoint = (l: Link): Endpoint => ({ name: l.server, host: l.host, port: l.port });

/** The resource's rule for the run's lock kind (resource/fences.ts). */
const ruleOf = (lock: LockSpec): string => (lock.kind === "semaphore" ? `semaphore:${lock.permits}` : lock.kind);

export async function startSystem(ctx: SystemContext): Promise<System> {
  const { test, group, ports, runDir, t0 } = ctx;
  // Before anything starts: a missing libfaketime or shim is one clear message.
  if (test.workerClocks) faketimePreload();
  const logs = (name: string): string => join(runDir, "logs", `${name}.log`);
  // The resource first: it takes the first port of --port-base, the servers the next.
  // Postgres' client and docker mode's engine client are loaded only by the runs that use them.
  const pg = test.resourceStore === "postgres" ? await (await import("./postgres-backend.ts")).startResourceDb(group, ports, runDir) : undefined;
  // The resource's dynalite keeps its LevelDB in the run directory: what it committed outlives the run.
  const dynamo = test.resourceStore === "dynamodb" ? (await (await import("../cluster/dynamodb.ts")).startDynalite(group, ports, { runDir, name: "resource-db", persistent: true })).node : undefined;
  const db = pg ?? dynamo;
  if (db) ctx.started("resource_db", db);
  const resource = await startResource({
    ...(pg ? { pg } : {}),
    ...(dynamo ? { dynamo } : {}),
    logPath: join(runDir, RUN_FILES.resource),
    fencing: test.fencing,
    fenceReads: test.fenceReads,
    rule: ruleOf(test.workloadOptions.lock),
    t0,
    logFile: logs("resource"),
    port: test.portBase ? await ports.take() : 0,
  });
  group.watch(resource.pid);
  group.onStop(() => resource.stop());
  ctx.started("resource", { url: resource.url, pid: resource.pid });

  const metricsServices = [{ name: "resource", url: resource.url }];
  let toxiproxyUrl = test.toxiproxy;
  if (!toxiproxyUrl) {
    const proxy = await spawnProxyServer({ logFile: logs("proxy"), port: test.portBase ? await ports.take() : 0 });
    group.watch(proxy.pid);
    group.onStop(() => proxy.stop());
    toxiproxyUrl = proxy.url;
    metricsServices.unshift({ name: "proxy", url: proxy.url });
    ctx.started("proxy", { url: proxy.url, pid: proxy.pid });
  }

  const shared = Boolean(test.serverOptions.external);
  // On a cluster the run shares, its keys are its own: named under a prefix of the
  // run's, and deleted at the end.
  const keyPrefix = test.workloadOptions.keyPrefix ?? (shared ? `fencecheck:${basename(runDir)}:` : "");
  if (keyPrefix) ctx.started("key_prefix", keyPrefix);
  // A service of the user's that takes more than addresses places its servers
  // itself, and makes what the run keeps there (DynamoDB: the run's table).
  const service = shared && test.backend.external ? await test.backend.external.open({ test, group, keyPrefix, started: ctx.started }) : null;
  const external = service?.servers ?? (test.serverOptions.external && (await placeServers(test.toxiproxy, test.serverOptions.external)));
  const cluster = external
    ? externalCluster(external)
    : await test.backend.start({ group, ports, runDir, toxiproxyUrl, serverOptions: test.serverOptions, client: test.client, deployment: await deploy(ctx) });
  const nodes = cluster.nodes;
  ctx.started("servers", nodes);

  const workerNames = Array.from({ length: test.workers }, (_, i) => `worker-${i + 1}`);
  // A run's proxies are named after it, so two runs can share one Toxiproxy.
  const prefix = test.toxiproxy ? `fc-${process.pid}-` : "";
  const behind = (name: string) => external?.find((s) => s.name === name)?.proxy;
  const upstreams = nodes.map((n) => ({ ...n, proxy: behind(n.name) }));
  // --links direct: no proxy between a worker and what it talks to, so a
  // measurement does not pay the proxy's hop (etcd's members still meet through it).
  const links = test.directLinks ? null : await Links.create(toxiproxyUrl, prefix, workerNames, [...upstreams, { name: "resource", host: "127.0.0.1", port: resource.port }]);
  ctx.started("links", links ? links.describe() : "direct");

  const workers: WorkerHandle[] = [];
  for (const name of workerNames)
    workers.push(await spawnWorker(group, name, runDir, ctx.record, { onWarning: (m) => ctx.warn(name, m), skewableClock: test.workerClocks ?? false }));
  const assignment = workers.map(() => [] as number[]);
  for (let c = 0; c < test.concurrency; c++) assignment[workerNames.indexOf(workerOfClient(c, test.workers))].push(c);
  await Promise.all(
    workers.map((w, i) => {
      const mine = links?.of(w.name);
      const lockEndpoints = mine ? nodes.map((n) => endpoint(mine.find((l) => l.server === n.name)!)) : nodes.map(({ name, host, port }) => ({ name, host, port }));
      const toResource = mine?.find((l) => l.server === "resource") ?? { host: "127.0.0.1", port: resource.port };
      return w.setup({
        worker: w.name,
        clients: assignment[i],
        concurrency: test.concurrency,
        seed: test.seed,
        t0: t0.toString(),
        endpoints: Object.fromEntries(assignment[i].map((c) => [c, lockEndpoints])),
        ...(service?.service ? { service: service.service } : {}),
        client: test.client,
        clientOptions: test.clientOptions,
        backend: test.backend.name,
        workload: test.workload.name,
        opts: { ...test.workloadOptions, keyPrefix },
        resourceUrl: `http://${toResource.host}:${toResource.port}`,
        commandTimeoutMs: test.commandTimeoutMs,
        ...(test.metricsPort != null ? { metrics: { backend: test.backend.name, client: test.client } } : {}),
      });
    }),
  );
  ctx.started("workers", Object.fromEntries(workers.map((w, i) => [w.name, { pid: w.proc.pid, clients: assignment[i] }])));
  return {
    resource,
    cluster,
    nodes,
    links,
    workers,
    assignment,
    metricsServices,
    ...(test.workerClocks
      ? {
          skewWorkerClock: async (name: string, offsetMs: number) => {
            if (!workerNames.includes(name)) throw new Error(`no worker named ${name} (workers: ${workerNames.join(", ")})`);
            writeOffset(workerClockFile(runDir, name), offsetMs);
          },
        }
      : {}),
    close: async () => {
      // Toxics off the user's proxies first: with no address of its own, a server's keys are deleted through its proxy.
      if (test.toxiproxy && links) {
        const left = await links.remove();
        if (left.length) {
          ctx.started("toxics_left", left);
          process.stderr.write(`fencecheck: could not remove from your Toxiproxy: ${left.join("; ")}\n`);
        }
      }
      if (external) ctx.started("keys_removed", await (service ? service.remove() : test.backend.removeKeys(nodes, keyPrefix)));
    },
  };
}

/** Where the lock servers run: the group's child processes, or containers whose removal the group's teardown awaits. */
async function deploy(ctx: SystemContext): Promise<Deployment> {
  const { test, group, runDir } = ctx;
  if (test.serverOptions.deploy === "local") return localDeployment(group);
  const { dockerDeployment, findEngine } = await import("../docker/index.ts");
  const engine = await findEngine();
  const deployment = await dockerDeployment({ engine, runDir, group, pauseMode: test.serverOptions.pauseMode, log: (line) => process.stderr.write(line + "\n") });
  group.onStop(() => deployment.stop());
  ctx.started("deployment", deployment.describe());
  return {
    ...deployment,
    // run.json's record follows the containers as they come up.
    start: async (spec) => {
      await deployment.start(spec);
      ctx.started("deployment", deployment.describe());
    },
  };
}
