// A lock client of the user's own, in one module: `--client ./my-lock.ts`. The
// module's default export (or the module itself) says what the lock is and makes
// one LockClient per logical client, exactly as the shipped clients do; the
// workload, the nemeses and the checker treat it like any other.
// examples/redis-lock-adapter.ts is a complete, commented one.
import { existsSync } from "node:fs";
import { isAbsolute, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { BadInput, rng } from "../lib/index.ts";
import type { ClientContext, FenceCounter, LockAdapter, LockClient, MakeClient } from "./lock.ts";
import { isManifestPath, loadProgramAdapter, programAdapter, readManifest, type ProgramSpec } from "./program/index.ts";
import { repoFile } from "../lib/paths.ts";

export type { LockAdapter };

/**
 * The adapter as the worker makes its clients: a lock that issues no fences gets
 * them from counters on the backend's servers when --fence-source says so
 * (single: on the first server; max-incr: on every one, the largest), taken
 * right after each acquire, where the backend has such counters (`fenceCounter`,
 * loaded only for a lock without fences: a run's start must not pay for it).
 */
export async function adapterClients(adapter: Pick<LockAdapter, "fences" | "create">, fenceCounter?: () => Promise<FenceCounter>): Promise<{ create: MakeClient }> {
  if (adapter.fences || !fenceCounter) return { create: (ctx) => adapter.create(ctx) };
  const counter = await fenceCounter();
  return {
    create(ctx) {
      const client = adapter.create(ctx);
      const source = ctx.options.fenceSource ?? "none";
      return source === "none" ? client : counter(client, ctx, source);
    },
  };
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
    missing.push('"backends" (the backends it works with, by their --backend names)');
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

/**
 * A reference adapter program shipped with fencecheck (adapters/), as its
 * backend declares it among its clients: what it is, whether it fences and the
 * kinds it offers are its manifest's, read when first asked; fences from the
 * backend's counters (--fence-source) where its lock issues none.
 */
export function shippedProgram(manifest: string, fenceCounter?: () => Promise<FenceCounter>) {
  let spec: ProgramSpec | undefined;
  const read = (): ProgramSpec => (spec ??= readManifest(repoFile(manifest)));
  return {
    program: manifest,
    get describe() {
      return read().describe;
    },
    get fences() {
      return read().fences;
    },
    get kinds() {
      return read().kinds;
    },
    load: async (): Promise<MakeClient> => (await adapterClients(programAdapter(read()), fenceCounter)).create,
  };
}
