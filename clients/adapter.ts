// A lock client of the user's own, in one module: `--client ./my-lock.ts`. The
// module's default export (or the module itself) says what the lock is and makes
// one LockClient per logical client, exactly as the shipped clients do; the
// workload, the nemeses and the checker treat it like any other.
// examples/redis-lock-adapter.ts is a complete, commented one.
import { existsSync } from "node:fs";
import { isAbsolute, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { BadInput, rng } from "../lib/index.ts";
import type { AcquireRequest, ClientContext, Hold, LockAdapter, LockClient, Outcome } from "./lock.ts";
import { RedlockNodes } from "./redlock-nodes.ts";
import { redlockFence } from "./redlock-fence.ts";
import { isManifestPath, loadProgramAdapter } from "./program/index.ts";

export type { LockAdapter };

/**
 * The adapter as the worker makes its clients: a lock that issues no fences gets
 * them from Redis counters on the backend's nodes when --fence-source says so
 * (single: INCR on the first node; max-incr: on every node, the largest), as the
 * Redlock clients do, taken right after each acquire.
 */
export function adapterClients(adapter: Pick<LockAdapter, "fences" | "create">): { create(ctx: ClientContext): LockClient } {
  return {
    create(ctx) {
      const client = adapter.create(ctx);
      const source = ctx.options.fenceSource ?? "none";
      return adapter.fences || source === "none" ? client : new CounterFenced(client, ctx, source);
    },
  };
}

class CounterFenced implements LockClient {
  private readonly nodes: RedlockNodes;
  constructor(
    private readonly inner: LockClient,
    private readonly ctx: ClientContext,
    private readonly source: "single" | "max-incr",
  ) {
    this.nodes = new RedlockNodes(ctx.endpoints, ctx.commandTimeoutMs);
  }

  async acquire(key: string, ttlMs: number, timeoutMs: number, request?: AcquireRequest): Promise<Outcome<Hold>> {
    const got = await this.inner.acquire(key, ttlMs, timeoutMs, request);
    if (got.type !== "ok" || got.value.fence !== null) return got;
    // A re-entry takes its outer hold's fence: the counter is taken once per outermost hold.
    if (request?.reenter) return { type: "ok", value: { ...got.value, fence: request.reenter.fence } };
    await this.nodes.ready();
    // Held by now: a fence that cannot be had is an unknown outcome (it throws).
    const all = this.ctx.endpoints.map((_, i) => i);
    const fence = await redlockFence(this.nodes, this.source, key, got.value.owner, all, this.ctx.commandTimeoutMs);
    return { type: "ok", value: { ...got.value, fence, extra: { ...got.value.extra, fence_source: this.source } } };
  }

  renew(key: string, hold: Hold, ttlMs: number) {
    return this.inner.renew(key, hold, ttlMs);
  }

  release(key: string, hold: Hold) {
    return this.inner.release(key, hold);
  }

  async close(): Promise<void> {
    await this.inner.close();
    this.nodes.close();
  }
}

/** Whether a --client value names a module, or an adapter program's manifest (.json), rather than a shipped client. */
export const isAdapterPath = (name: string): boolean => /^\.{0,2}\//.test(name) || /\.(ts|mts|js|mjs|json)$/.test(name);

/** The absolute path of an adapter named on the command line, which must exist. */
export function adapterPath(name: string, cwd = process.cwd()): string {
  const path = isAbsolute(name) ? name : resolve(cwd, name);
  if (!existsSync(path)) throw new BadInput(`--client ${name}: no such file (${path})`);
  return path;
}

const METHODS = ["acquire", "renew", "release", "close"] as const;

/** Load and check the module's exports; BadInput names each thing missing. */
export async function loadAdapter(path: string): Promise<LockAdapter> {
  if (isManifestPath(path)) return loadProgramAdapter(path);
  let mod: Record<string, unknown>;
  try {
    mod = (await import(pathToFileURL(path).href)) as Record<string, unknown>;
  } catch (err) {
    throw new BadInput(`--client ${path}: the module does not load: ${(err as Error).message.split("\n")[0]}`);
  }
  const a = (mod.default && typeof mod.default === "object" ? mod.default : mod) as Partial<Record<keyof LockAdapter, unknown>>;
  const missing: string[] = [];
  if (typeof a.describe !== "string" || a.describe === "") missing.push('"describe" (a string saying what the lock is)');
  if (!Array.isArray(a.backends) || a.backends.length === 0 || !a.backends.every((b) => typeof b === "string"))
    missing.push('"backends" (the backends it works with, e.g. ["redis"])');
  if (typeof a.fences !== "boolean") missing.push('"fences" (true when its holds carry a fencing token the lock service issued)');
  if (typeof a.create !== "function") missing.push('"create" (a function from a ClientContext to a lock client)');
  if (missing.length)
    throw new BadInput(`--client ${path} is not a lock client adapter: its default export lacks ${missing.join(", ")}; examples/redis-lock-adapter.ts shows one`);
  return a as LockAdapter;
}

/**
 * Make one client, against an address where nothing listens, and check it has
 * every method of a LockClient; then close it. Before anything starts, so a
 * wrong adapter is refused (254), not found out by a worker mid-run.
 */
export async function checkAdapterClient(adapter: LockAdapter, path: string, endpointCount: number): Promise<void> {
  const ctx: ClientContext = {
    id: 0,
    endpoints: Array.from({ length: endpointCount }, (_, i) => ({ name: `probe-${i + 1}`, host: "127.0.0.1", port: 9 })),
    ownerPrefix: "probe",
    commandTimeoutMs: 500,
    rng: rng(0, "adapter-probe"),
    options: {},
  };
  let client: LockClient;
  try {
    client = adapter.create(ctx);
  } catch (err) {
    throw new BadInput(`--client ${path}: create() threw: ${(err as Error).message}`);
  }
  const lacks = METHODS.filter((m) => typeof (client as unknown as Record<string, unknown>)?.[m] !== "function");
  if (lacks.length === 0 && client.whenStarted) {
    // An adapter program: started once, answering init, then closed.
    try {
      await client.whenStarted();
    } catch (err) {
      await Promise.resolve(client.close()).catch(() => {});
      throw new BadInput(`--client ${path}: the adapter did not start as the protocol asks (docs/adapter-protocol.md): ${(err as Error).message}`);
    }
  }
  if (typeof client?.close === "function") await Promise.resolve(client.close()).catch(() => {});
  if (lacks.length) throw new BadInput(`--client ${path}: the client create() returns has no ${lacks.map((m) => `${m}()`).join(", ")} (a lock client has acquire, renew, release and close)`);
}
