// A worker process: runs some of the run's logical clients. Clients live in
// several processes so that the pause nemesis' SIGSTOP freezes a client for real,
// its renew watchdog and its buffered sockets included.
import { monitorEventLoopDelay } from "node:perf_hooks";
import type { Registry } from "prom-client";
import type { Tracer } from "@opentelemetry/api";
import { ResourceClient, loadAdapter, adapterClients, type LockClient, type MakeClient, type WriteOutcome } from "../clients/index.ts";
import type { Backend } from "../core/index.ts";
import { WORKLOADS, LogicalClient, Arrivals, loadOperationMetrics, keyName, type ClientEnv, type OperationMetrics } from "../workloads/index.ts";
import { runClock } from "../store/clock.ts";
import { rng, sleep } from "../lib/index.ts";
import type { UnindexedEvent } from "../store/events.ts";
import type { FromWorker, ToWorker, WorkerConfig } from "./protocol.ts";

const send = (m: FromWorker): void => {
  process.send?.(m);
};

// No orphan: when the runner goes (however it goes), the IPC channel closes.
process.on("disconnect", () => process.exit(0));
process.on("unhandledRejection", (err) => console.error("unhandled rejection in worker:", err));

// How often a worker sends its metrics to the runner: a scrape sees them at most
// this late. Sent unasked, so a scrape never waits on a worker: one frozen by the
// pause nemesis shows what it sent before it froze, and counts nothing meanwhile.
const METRICS_EVERY_MS = 1000;
let metrics: { registry: Registry; operations: OperationMetrics } | null = null;

let pending: UnindexedEvent[] = [];
// Every event of every client of this worker passes here, once: the history and
// the metrics are counted from the same events.
const emit = (e: UnindexedEvent): void => {
  metrics?.operations.observe(e);
  if (pending.length === 0) setImmediate(flush);
  pending.push(e);
};
function flush(): void {
  if (pending.length === 0) return;
  send({ type: "events", events: pending });
  pending = [];
}

/** Never rejects: metrics that could not be sent are a line in the worker's log, not a stopped worker. */
async function sendMetrics(): Promise<void> {
  if (!metrics) return;
  try {
    send({ type: "metrics", metrics: await metrics.registry.getMetricsAsJSON() });
  } catch (err) {
    console.error("could not send metrics:", err);
  }
}

/**
 * The client's code, loaded once: on the runner's "load", sent as soon as the
 * worker is started (its library's modules load while the servers start, off
 * the run's critical path), or at setup if none came.
 */
let loaded: { client: string; create: Promise<MakeClient> } | null = null;
function loadClient(client: string, backend: string): Promise<MakeClient> {
  if (loaded?.client !== client) {
    // A shipped client by name, or the user's adapter module by its absolute path.
    // An adapter whose lock issues no fences takes them from counters on the backend's servers, where it has them (--fence-source).
    const create = declarationOf(backend).then(async (b) =>
      Object.hasOwn(b.clients, client) ? b.clients[client].load() : (await adapterClients(await loadAdapter(client), b.fenceCounter)).create,
    );
    // A failure is reported by setup, which awaits it; unawaited until then, it must not count as unhandled.
    create.catch(() => {});
    loaded = { client, create };
  }
  return loaded.create;
}

/**
 * The run's backend's declaration, and no other's: a worker makes the clients of
 * one backend, and loading every backend's declaration (their options, their
 * scenarios) was most of a worker's start. Each backend's folder declares it as
 * `backend` in its index.ts (backends/index.ts lists them for the runner).
 */
const declarationOf = async (name: string): Promise<Backend> => ((await import(`../backends/${name}/index.ts`)) as { backend: Backend }).backend;

let config: WorkerConfig;
let locks: LockClient[] = [];
/** With --otel: the tracer the clients' spans are made with, and the provider's last flush. */
let tracing: { tracer: Tracer; finish(): Promise<void>; resource(r: ResourceClient): ResourceClient } | null = null;
/** Each logical client by id, once it runs: notices are recorded under its current process. */
const logical = new Map<number, LogicalClient>();
let endAt = Infinity;
let clock: () => number = () => 0;

async function setup(c: WorkerConfig): Promise<void> {
  config = c;
  clock = runClock(BigInt(c.t0));
  if (c.metrics) {
    // prom-client is loaded by the runs that keep metrics only (--metrics-port): about 40 ms of every worker's start otherwise.
    const [{ Registry }, OperationMetrics] = await Promise.all([import("prom-client"), loadOperationMetrics()]);
    const registry = new Registry();
    registry.setDefaultLabels({ ...c.metrics, worker: c.worker });
    metrics = { registry, operations: new OperationMetrics(registry) };
    setInterval(() => void sendMetrics(), METRICS_EVERY_MS).unref();
    // Its series are there, at zero, from the moment it is ready.
    await sendMetrics();
  }
  const create = await loadClient(c.client, c.backend);
  if (c.otel) tracing = await startTracing(c.otel.url, c.worker, c.concurrency);
  locks = c.clients.map((id) =>
    create({
      id, endpoints: c.endpoints[id], ...(c.service ? { service: c.service } : {}), ownerPrefix: `c${id}`, commandTimeoutMs: c.commandTimeoutMs, rng: rng(c.seed, "lock", id), options: c.clientOptions,
      backend: c.backend, ttlMs: c.opts.ttlMs, seed: c.seed,
      notice: (f, key, owner) => logical.get(id)?.notice(f, key, owner),
      log: (line) => process.stderr.write(line + "\n"),
      warn: (message) => send({ type: "warning", message }),
      // A message of its own: a stray line while nothing was outstanding leaves no event to carry it.
      protocolError: ({ code, pid, message }) =>
        send({ type: "protocol-error", error: { time: clock(), worker: c.worker, client: id, process: logical.get(id)?.process ?? id, pid, code, message } }),
    }),
  );
  // Each logical client is a thread of the trace (thread.id its id), as it is a process of the history.
  if (tracing) {
    const { tracedLock } = await import("../otel/index.ts");
    locks = locks.map((l, i) => tracedLock(l, { thread: c.clients[i], tracer: tracing!.tracer }));
  }
  // Adapter programs are started and have answered init before the run's clock starts. One that
  // failed has said so (a warning, the worker's log); its client's first operation starts another.
  await Promise.all(locks.map((l) => l.whenStarted?.().catch(() => {})));
  send({ type: "ready" });
}

const LAG_RESOLUTION_MS = 10;

async function go(startAt: number, end: number): Promise<void> {
  endAt = end;
  // The runner's lead (START_LEAD_MS) is meant to make this impossible. If it
  // happens, this worker's clients start late, maybe after another worker's that
  // were staggered to start after them: the person must hear of it.
  const late = clock() - startAt;
  if (late > 0) send({ type: "warning", message: `its "go" came ${(late / 1e6).toFixed(1)} ms after time zero: its clients' first attempts were made that late` });
  // The harness's own lag: with a thousand clients in two processes, a late timer
  // or reply would otherwise look like a slow lock service.
  const lag = monitorEventLoopDelay({ resolution: LAG_RESOLUTION_MS });
  lag.enable();
  const plain = new ResourceClient(config.resourceUrl, { timeoutMs: config.commandTimeoutMs });
  const resource = tracing ? tracing.resource(plain) : plain;
  const workload = WORKLOADS[config.workload as keyof typeof WORKLOADS];
  await Promise.all(
    config.clients.map(async (id, i) => {
      const o = config.opts;
      const r = rng(config.seed, "client", id);
      const client = new LogicalClient(id, config.concurrency, clock, emit);
      logical.set(id, client);
      const arrivals = new Arrivals(startAt + id * o.staggerMs * 1e6, o.rate, r);
      const env: ClientEnv = {
        client,
        lock: locks[i],
        resource,
        rng: r,
        opts: o,
        async nextArrival() {
          const next = arrivals.after(clock());
          if (next >= endAt) return false;
          await sleep((next - clock()) / 1e6);
          return clock() < endAt;
        },
        pickKey: () => (o.keyPrefix ?? "") + keyName(o.keys === 1 ? 0 : r.int(0, o.keys - 1)),
      };
      try {
        await workload.run(env);
      } catch (err) {
        console.error(`client ${id} stopped on an error:`, err);
      }
    }),
  );
  flush();
  await sendMetrics();
  await Promise.all(locks.map((l) => l.close().catch(() => {})));
  // Every span out before "done": the runner stops the collector once the workers are done.
  await tracing?.finish();
  lag.disable();
  // The histogram counts each 10 ms tick's whole wait; the delay is what exceeds it.
  // A SIGSTOP of this worker (the pause nemesis) shows here too: it is a delay.
  const ms = (ns: number): number => Math.max(0, Math.round((ns - LAG_RESOLUTION_MS * 1e6) / 1e4) / 100);
  send({ type: "done", eventLoopDelayMs: { p50: ms(lag.percentile(50)), p99: ms(lag.percentile(99)), max: ms(lag.max) } });
}

/**
 * --otel: the SDK's tracer for this worker (service.instance.id its name), and
 * the resource's writes as lock.write spans in their hold's trace. A write's
 * thread is its logical client, which is its process modulo the concurrency, as
 * the runner counts (a process retired after an unknown outcome carries on as
 * process + concurrency).
 */
async function startTracing(url: string, worker: string, concurrency: number): Promise<NonNullable<typeof tracing>> {
  const { startSdkTracing, tracedWrite, spanData } = await import("../otel/index.ts");
  const { tracer, finish } = await startSdkTracing({ collectorUrl: url, serviceName: "fencecheck-worker", instance: worker });
  const resource = (plain: ResourceClient): ResourceClient => {
    // The same client with its write traced: its connections are shared, not copied.
    const traced = Object.create(plain) as ResourceClient;
    traced.write = async (key, w, opts) => {
      let answer: WriteOutcome | null = null;
      const hold = { owner: w.owner, fence: w.fence, ttlMs: 0 };
      const outcome = await tracedWrite(key, hold, spanData(w.data), async () => {
        answer = await plain.write(key, w, opts);
        return answer.type === "ok" ? { type: "ok" as const, value: answer } : answer;
      }, { tracer, thread: w.process % concurrency });
      return outcome.type === "ok" ? outcome.value : answer!;
    };
    return traced;
  };
  return { tracer, finish, resource };
}

process.on("message", (m: ToWorker) => {
  if (m.type === "load") void loadClient(m.client, m.backend);
  else if (m.type === "setup") setup(m.config).catch((err) => send({ type: "error", message: String(err?.stack ?? err) }));
  else if (m.type === "go") go(m.startAt, m.endAt).catch((err) => send({ type: "error", message: String(err?.stack ?? err) }));
  else if (m.type === "stop") endAt = Math.min(endAt, clock());
});
