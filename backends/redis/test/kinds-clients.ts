// Clients of the registry (backends/index.ts) by name, against the test file's one
// redis-server, and a plain connection to read what the server holds.
import { Redis } from "ioredis";
import { type ClientOptions, type Hold, type LockClient, type Outcome } from "../../../clients/index.ts";
import { createClient } from "../../index.ts";
import { rng } from "../../../lib/index.ts";
import { useRedisServer } from "./server.ts";

export function redisKindsServer(): { client(name: string, prefix: string, options?: ClientOptions): Promise<LockClient>; server(): Redis } {
  const clients: LockClient[] = [];
  let plain: Redis | null = null;
  const node = useRedisServer(async () => {
    await Promise.all(clients.map((c) => c.close()));
    plain?.disconnect();
  });
  return {
    async client(name, prefix, options = {}) {
      const endpoint = { ...node(), name: "redis-1" };
      const c = await createClient(name, { endpoints: [endpoint], ownerPrefix: prefix, commandTimeoutMs: 1000, rng: rng(5, prefix), options });
      clients.push(c);
      return c;
    },
    server: () => (plain ??= new Redis({ host: node().host, port: node().port })),
  };
}

/** The hold of an ok, or a failed test naming what came instead. */
export function held(o: Outcome<Hold>): Hold {
  if (o.type !== "ok") throw new Error(`expected a hold, got ${JSON.stringify(o)}`);
  return o.value;
}
