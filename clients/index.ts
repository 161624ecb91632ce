// Lock clients by name, and the resource client. A workload asks for a client by
// the name the user gave (--client) and gets a LockClient; which service is behind
// it is the backend's business.
import { RedisLock } from "./redis.ts";
import type { LockClient, ClientOptions } from "./lock.ts";
import type { Rng } from "../lib/index.ts";

export type { Hold, LockClient, Outcome, ClientOptions } from "./lock.ts";
export { ResourceClient } from "./resource.ts";

export interface Endpoint {
  name: string;
  host: string;
  port: number;
}

export interface ClientContext {
  /** The lock service's nodes as this client reaches them. */
  endpoints: Endpoint[];
  ownerPrefix: string;
  commandTimeoutMs: number;
  rng: Rng;
  options: ClientOptions;
}

export interface ClientKind {
  describe: string;
  create(ctx: ClientContext): LockClient;
}

export const CLIENTS: Record<string, ClientKind> = {
  redis: {
    describe: "SET NX PX + INCR fence in one Lua script; compare-and-delete release",
    create: (ctx) => new RedisLock({ ...ctx, endpoint: ctx.endpoints[0] }),
  },
  "redis-unsafe-release": {
    describe: "as redis, but releases with GET then DEL (the T1 bug, kept on purpose)",
    create: (ctx) => new RedisLock({ ...ctx, endpoint: ctx.endpoints[0], unsafeRelease: true }),
  },
};
