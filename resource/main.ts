// The protected resource as a process of its own, so that faults aimed at clients
// (pauses, kills) never stop the thing that judges their writes.
//
//   FENCECHECK_T0=<ns> tsx resource/main.ts --log resource.ndjson --fence on [--port N] [--fence-reads] [--store backends/NAME/decider --store-config JSON]
//
// Prints one line, {"port":N}, on stdout once it listens; everything else it says
// goes to stderr. Exits on SIGTERM, SIGINT or SIGHUP, and when its parent dies.
import { BadInput, EXIT, onParentGone } from "../lib/index.ts";
import { runClockFromEnv } from "../store/clock.ts";
import { parseResourceArgs } from "./args.ts";
import type { StoreDeciderModule } from "./committed.ts";
import { DecisionLog } from "./decision-log.ts";
import { FencedStore } from "./fences.ts";
import { memoryDecider, type Decider } from "./decider.ts";
import { pathToFileURL } from "node:url";
import { entryFile } from "../lib/paths.ts";
import { ResourceMetrics } from "./metrics.ts";
import { createResourceServer } from "./server.ts";
import type { ResourceDecision } from "../store/events.ts";

function fatal(e: unknown): never {
  const bad = e instanceof BadInput;
  process.stderr.write(`resource: ${bad ? (e as Error).message : ((e as Error).stack ?? String(e))}\n`);
  process.exit(bad ? EXIT.badInput : EXIT.crash);
}

/** Errors of what we were given (environment, paths) are bad input, not crashes. */
function inputOrFail<T>(f: () => T, prefix = ""): T {
  try {
    return f();
  } catch (e) {
    throw new BadInput(prefix + (e as Error).message);
  }
}

/** The decider of a store (backends/NAME/decider.ts, ResourceStore.decider): its module's `decider(config, fencing)`. */
async function storeDecider(entry: string, config: Record<string, unknown>, fencing: boolean): Promise<Decider> {
  const mod = (await import(pathToFileURL(entryFile(entry)).href)) as Partial<StoreDeciderModule>;
  if (typeof mod.decider !== "function") throw new BadInput(`--store ${entry}: the module has no decider(config, fencing) export`);
  return mod.decider(config, fencing);
}

async function main(): Promise<void> {
  const args = parseResourceArgs(process.argv.slice(2));
  const clock = inputOrFail(() => runClockFromEnv());
  const log = inputOrFail(() => new DecisionLog(args.log, clock), `cannot open --log ${args.log}: `);
  // A store's decider (and the database client it loads) comes from the backend
  // that offers it, named by the runner: the resource knows no backend.
  const decider = args.store ? await storeDecider(args.store.entry, args.store.config, args.fencing) : memoryDecider(new FencedStore(args.fencing, args.fenceReads, args.rule));
  const tracing = args.otel ? await decisionSpans(args.otel, args.store !== null) : null;
  const server = createResourceServer({ decider, log, metrics: new ResourceMetrics(), ...(tracing ? { decided: tracing.decided } : {}) });

  // Every decision is already on disk (written synchronously), so stopping needs
  // no draining: requests still in flight were never decided. Their spans are
  // sent first (--otel), for at most a second: the runner's SIGKILL comes at two.
  let stopping = false;
  const stop = (why: string): void => {
    if (stopping) return;
    stopping = true;
    process.stderr.write(`resource: stopping (${why})\n`);
    server.close();
    server.closeAllConnections();
    log.close();
    if (!tracing) process.exit(0);
    void Promise.race([tracing.finish(), new Promise((r) => setTimeout(r, 1000))]).then(() => process.exit(0));
  };
  for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"] as const) process.on(signal, () => stop(signal));
  onParentGone({ watchStdin: args.watchStdin }, stop);
  // A parent that stopped reading our stdout must not crash us with EPIPE.
  process.stdout.on("error", () => {});

  server.on("error", fatal);
  server.listen(args.port, "127.0.0.1", () => {
    const address = server.address();
    if (address === null || typeof address === "string") return fatal(new Error(`unexpected listen address ${String(address)}`));
    process.stdout.write(JSON.stringify({ port: address.port }) + "\n");
    process.stderr.write(
      `resource: listening on 127.0.0.1:${address.port}, fencing ${args.fencing ? "on" : "off"}${args.fenceReads ? ", fenced reads" : ""}, log ${args.log}\n`,
    );
  });
}

/**
 * --otel: a lock.decision span of each decision, as docs/traces.md defines it.
 * Its order is the place the decision took effect among its key's decisions,
 * from 1: a store's own, or in memory a count per key (decisions are made and
 * logged one at a time, in the order they take effect). A trace check reads a
 * key's skipped numbers as decisions missing from the trace, so they must be
 * consecutive: the log's seq, which counts every key's, would not do.
 */
async function decisionSpans(url: string, store: boolean): Promise<{ decided: (d: ResourceDecision) => void; finish: () => Promise<void> }> {
  const { startSdkTracing, spanData } = await import("../otel/index.ts");
  const { tracer, finish } = await startSdkTracing({ collectorUrl: url, serviceName: "fencecheck-resource", instance: "resource" });
  const counted = new Map<string, number>();
  return {
    finish,
    decided(d) {
      const order = store ? d.order : (counted.get(d.key) ?? 0) + 1;
      if (!store) counted.set(d.key, order!);
      const span = tracer.startSpan("lock.decision", {
        attributes: {
          "lock.key": d.key,
          "lock.owner": d.owner,
          "lock.operation": d.op,
          "lock.data": spanData(d.data),
          "lock.fencing": d.fencing,
          ...(d.fence === null ? {} : { "lock.fence": d.fence }),
          ...(d.max_before === null ? {} : { "lock.decision.max_before": d.max_before }),
          ...(d.accepted === null ? {} : { "lock.decision.accepted": d.accepted }),
          ...(order === undefined || order === null ? {} : { "lock.decision.order": order }),
        },
      });
      span.end();
    },
  };
}

main().catch(fatal);
