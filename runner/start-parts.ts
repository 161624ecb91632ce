// Bringing up what a run tests: the worker processes, the resource, the fault
// proxy and the lock servers all at once (each is a process of its own that takes
// a few hundred ms to come up, and none needs another to start, but for members
// that meet through the proxy); then one proxied link per worker and server (or a
// proxy of the user's that every worker shares, cluster/links.ts); then the
// workers' clients. Everything started is known to the process group, so the
// runner's teardown (or the reaper) stops it whatever happens here; a part that
// fails lets the others finish starting first, so that none comes up after it.
import { Toxiproxy } from "toxiproxy-node-client";
import { basename, join, relative } from "node:path";
import { externalCluster } from "../cluster/external.ts";
import { placeServers } from "../cluster/external-proxies.ts";
import type { ProcessGroup } from "../cluster/processes.ts";
import type { PortPlan } from "../cluster/ports.ts";
import type { ServerNode } from "../cluster/cluster.ts";
import { Links, type Link } from "../cluster/links.ts";
import type { Cluster } from "../cluster/cluster.ts";
import { startResource, type ResourceHandle } from "../resource/index.ts";
import { PROXY_VERSION, spawnProxyServer } from "../proxy/index.ts";
import { startToxiproxy, toxiproxyBinary } from "../toxiproxy/index.ts";
import { OTELCOL_VERSION, startCollector, type RunningCollector } from "../otelcol/index.ts";
import { RUN_FILES, appendProtocolError, workerName, type UnindexedEvent } from "../store/index.ts";
import type { Endpoint } from "../clients/index.ts";
import { spawnWorker, workerClockFile, type WorkerHandle } from "./workers.ts";
import { faketimePreload, writeOffset } from "../cluster/faketime.ts";
import type { Test } from "../core/index.ts";
import { RESOURCE_STORES, type StoreName } from "../backends/index.ts";
import type { LockSpec } from "../workloads/index.ts";
import { localDeployment, type Deployment } from "../cluster/deployment.ts";

export interface RunParts {
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
  /** --otel: the run's collector, and how to end its spans (the resource's flushed, then the collector stopped, which flushes its file). */
  otel?: { collector: RunningCollector; spansFile: string; finish(): Promise<void> };
  /** Stops what the process group does not own (the proxies of a shared Toxiproxy). */
  close(): Promise<void>;
}

/** Where a run's collector writes the spans (--otel), in its run directory. */
export const SPANS_FILE = join("otel", "spans.json");

export interface PartsContext {
  test: Test;
  group: ProcessGroup;
  ports: PortPlan;
  runDir: string;
  t0: bigint;
  /** `worker`: the worker that sent them. */
  record: (events: UnindexedEvent[], worker: string) => void;
  /** A worker's warning for the console. */
  warn: (worker: string, message: string) => void;
  /** Called as each part comes up, so run.json can say what there was if a later step fails. */
  started: (what: string, info: unknown) => void;
}

/** The worker a logical client lives in: clients are dealt out in turn. */
export const workerOfClient = (client: number, workers: number): string => workerName((client % workers) + 1);

const endpoint = (l: Link): Endpoint => ({ name: l.server, host: l.host, port: l.port });

/** The resource's rule for the run's lock kind (resource/fences.ts). */
const ruleOf = (lock: LockSpec): string => (lock.kind === "semaphore" ? `semaphore:${lock.permits}` : lock.kind);

export async function startParts(ctx: PartsContext): Promise<RunParts> {
  const { test, group, ports, runDir, t0 } = ctx;
  // Before anything starts: a missing libfaketime or shim is one clear message.
  if (test.workerClocks) faketimePreload();
  const logs = (name: string): string => join(runDir, "logs", `${name}.log`);
  const workerNames = Array.from({ length: test.workers }, (_, i) => workerName(i + 1));
  // The workers first: each is a Node process whose start and loading of the lock
  // client's library (a few hundred ms) need nothing of the servers, so they
  // happen while the resource, the proxy and the servers start. They get their
  // clients' addresses once the links exist (setup, below).
  const spawning = Promise.all(
    workerNames.map(async (name) => {
      const w = await spawnWorker(group, name, runDir, (events) => ctx.record(events, name), {
        onWarning: (m) => ctx.warn(name, m),
        onProtocolError: (e) => appendProtocolError(runDir, e),
        skewableClock: test.workerClocks ?? false,
      });
      w.send({ type: "load", client: test.client, backend: test.backend.name });
      return w;
    }),
  );
  // Awaited below with the rest; a failure meanwhile (while a resource database starts) is not unhandled.
  spawning.catch(() => {});
  // The resource first: it takes the first port of --port-base, the servers the next.
  // A store's server (and the client library it is asked with) is loaded only by the runs that use it.
  const store = test.resourceStore ? RESOURCE_STORES[test.resourceStore as StoreName] : undefined;
  const db = store ? await store.start({ group, ports, runDir }) : undefined;
  if (db) ctx.started("resource_db", db.node);
  // Their ports are taken before either starts, in the order --port-base has always
  // given them (the resource, the proxy, then the servers), so that they can start at once.
  const resourcePort = test.portBase ? await ports.take() : 0;
  // Toxiproxy says nothing when it listens, so it is given its port (never its 8474: PortPlan keeps off it).
  const proxyPort = test.toxiproxyAuto ? await ports.take() : !test.toxiproxy && test.portBase ? await ports.take() : 0;
  // --otel: the collector's receiver, on a port of the run's (it cannot pick a free one and say which), never its 4318.
  const collectorPort = test.otel ? await ports.take() : 0;
  const collectorUrl = `http://127.0.0.1:${collectorPort}`;
  const spansFile = join(runDir, SPANS_FILE);
  const collectorUp = test.otel
    ? startCollector({ receiverPort: collectorPort, fileOut: spansFile, dir: join(runDir, "otel"), logFile: logs("otelcol"), group }).then((collector) => {
        ctx.started("otel", { collector: collector.url, version: OTELCOL_VERSION, pid: group.get("otelcol")?.pid, spans: SPANS_FILE, config: relative(runDir, collector.configFile) });
        return collector;
      })
    : Promise.resolve(null);
  const resourceUp = startResource({
    ...(store && db ? { store: { entry: store.decider, config: db.config } } : {}),
    logPath: join(runDir, RUN_FILES.resource),
    fencing: test.fencing,
    fenceReads: test.fenceReads,
    rule: ruleOf(test.workloadOptions.lock),
    t0,
    logFile: logs("resource"),
    port: resourcePort,
    ...(test.otel ? { otel: collectorUrl } : {}),
  }).then((resource) => {
    group.watch(resource.pid);
    group.onStop(() => resource.stop());
    ctx.started("resource", { url: resource.url, pid: resource.pid });
    return resource;
  });
  // Our fault proxy; or with --toxiproxy auto, Toxiproxy started as a process of
  // the run's group (killed at teardown, or by the reaper), then used as a user's.
  const proxyUp = test.toxiproxy
    ? faultProxyOfUser(test.toxiproxy).then((about) => (ctx.started("fault_proxy", about), null))
    : test.toxiproxyAuto
      ? startToxiproxy({ port: proxyPort, logFile: logs("toxiproxy"), group }).then((toxiproxy) => {
          ctx.started("fault_proxy", { server: "toxiproxy", version: toxiproxy.version, url: toxiproxy.url, pid: group.get("toxiproxy")?.pid, started: "auto", binary: toxiproxyBinary() });
          return { url: toxiproxy.url, ours: false };
        })
      : spawnProxyServer({ logFile: logs("proxy"), port: proxyPort }).then((proxy) => {
          group.watch(proxy.pid);
          group.onStop(() => proxy.stop());
          ctx.started("fault_proxy", { server: "fencecheck-proxy", version: PROXY_VERSION, url: proxy.url, pid: proxy.pid });
          return { url: proxy.url, ours: true };
        });

  const shared = Boolean(test.serverOptions.external);
  // On a cluster the run shares, its keys are its own: named under a prefix of the
  // run's, and deleted at the end.
  const keyPrefix = test.workloadOptions.keyPrefix ?? (shared ? `fencecheck:${basename(runDir)}:` : "");
  if (keyPrefix) ctx.started("key_prefix", keyPrefix);
  // The servers at once too; a backend whose members meet through the proxy (etcd,
  // ZooKeeper) waits for it inside its start, having loaded its code meanwhile.
  const toxiproxyUrl = test.toxiproxy ? Promise.resolve(test.toxiproxy) : proxyUp.then((proxy) => proxy!.url);
  // A Toxiproxy, the user's or started for the run: the run's proxies are named after it and removed at the end.
  const theirs = test.toxiproxy !== null || test.toxiproxyAuto === true;
  // A proxy that fails is reported through proxyUp below; a backend that never asks for the URL must not leave its failure unhandled.
  toxiproxyUrl.catch(() => {});
  const serversUp = (async () => {
    // A service of the user's that takes more than addresses places its servers
    // itself, and makes what the run keeps there (DynamoDB: the run's table).
    const service = shared && test.backend.external ? await test.backend.external.open({ test, group, keyPrefix, started: ctx.started }) : null;
    const external = service?.servers ?? (test.serverOptions.external && (await placeServers(test.toxiproxy, test.serverOptions.external)));
    const cluster = external
      ? externalCluster(external)
      : await test.backend.start({ group, ports, runDir, toxiproxyUrl: () => toxiproxyUrl, serverOptions: test.serverOptions, options: test.backendOptions, client: test.client, ttlMs: test.workloadOptions.ttlMs, deployment: await deploy(ctx) });
    ctx.started("servers", cluster.nodes);
    return { service, external, cluster };
  })();
  const [resource, proxy, { service, external, cluster }, workers, collector] = await allStarted([resourceUp, proxyUp, serversUp, spawning, collectorUp] as const);
  const metricsServices = [...(proxy?.ours ? [{ name: "proxy", url: proxy.url }] : []), { name: "resource", url: resource.url }];
  const nodes = cluster.nodes;

  // A run's proxies are named after it, so two runs can share one Toxiproxy.
  const prefix = theirs ? `fc-${process.pid}-` : "";
  const behind = (name: string) => external?.find((s) => s.name === name)?.proxy;
  const upstreams = nodes.map((n) => ({ ...n, proxy: behind(n.name) }));
  // --links direct: no proxy between a worker and what it talks to, so a
  // measurement does not pay the proxy's hop (etcd's members still meet through it).
  const links = test.directLinks ? null : await Links.create(await toxiproxyUrl, prefix, workerNames, [...upstreams, { name: "resource", host: "127.0.0.1", port: resource.port }], () => ports.take());
  ctx.started("links", links ? links.describe() : "direct");

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
        ...(collector ? { otel: { url: collector.url } } : {}),
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
    // The workers export theirs before they say they are done; the resource on its SIGTERM.
    ...(collector ? { otel: { collector, spansFile, finish: async () => (await resource.stop(), await collector.stop()) } } : {}),
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
      if (theirs && links) {
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

/** run.json's fault_proxy for a Toxiproxy of the user's: where, and the version it says it is. */
async function faultProxyOfUser(url: string): Promise<Record<string, unknown>> {
  try {
    // Toxiproxy 2.6 and later answer JSON; older ones the bare version.
    const text = (await new Toxiproxy(url).getVersion()).trim();
    const version = text.startsWith("{") ? ((JSON.parse(text) as { version?: string }).version ?? text) : text;
    return { server: "toxiproxy", url, version };
  } catch (err) {
    return { server: "toxiproxy", url, version: null, version_error: (err as Error).message };
  }
}

/**
 * Waits for every part started at once, whether it came up or failed, and only
 * then gives the first failure: a part still starting when another failed would
 * otherwise come up after the teardown, which must find every process started.
 */
async function allStarted<T extends readonly unknown[]>(parts: { [K in keyof T]: Promise<T[K]> }): Promise<T> {
  const settled = await Promise.allSettled(parts);
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === "rejected");
  if (failed) throw failed.reason;
  return settled.map((s) => (s as PromiseFulfilledResult<unknown>).value) as unknown as T;
}

/** Where the lock servers run: the group's child processes, or containers whose removal the group's teardown awaits. */
async function deploy(ctx: PartsContext): Promise<Deployment> {
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
