// The postgres backend's start: the run's server (backends/postgres/server.ts), then the
// tables its lock clients keep their leases and fences in, and pgbouncer in
// front of it if asked.
import pg from "pg";
import { startPostgresCluster } from "./server.ts";
import type { Cluster } from "../../cluster/cluster.ts";
import { startPgbouncer } from "./pgbouncer.ts";
import type { ServerNode } from "../../cluster/cluster.ts";
import { RUNS_OWN, lockTablesSql, pgConfig } from "./session.ts";
import type { PostgresAccess } from "./session.ts";
import type { BackendContext } from "../../core/index.ts";
import type { ProcessGroup } from "../../cluster/processes.ts";
import type { PortPlan } from "../../cluster/ports.ts";

/** Run SQL on a server directly (not through a worker's proxy), as `access` says: the run's own server's superuser unless told. */
export async function onServer<T>(node: { host: string; port: number }, f: (c: pg.Client) => Promise<T>, timeoutMs = 10_000, access: PostgresAccess = RUNS_OWN): Promise<T> {
  const c = new pg.Client(pgConfig(node, access, timeoutMs));
  c.on("error", () => {});
  await c.connect();
  try {
    return await f(c);
  } finally {
    await c.end().catch(() => {});
  }
}

export async function startPostgresBackend(ctx: BackendContext, o: { durable: boolean; pooled: boolean }): Promise<Cluster> {
  const cluster = await startPostgresCluster(ctx.group, ctx.ports, { runDir: ctx.runDir, durable: o.durable, deployment: ctx.deployment });
  await onServer(cluster.nodes[0], (c) => c.query(lockTablesSql(RUNS_OWN.schema)));
  if (!o.pooled) return cluster;
  // The clients see the pooler as their server (buildTest refuses the faults that would aim past it).
  return { ...cluster, nodes: [await startPgbouncer(ctx.group, ctx.ports, ctx.runDir, cluster.nodes[0], ctx.deployment)] };
}

/**
 * --resource postgres: a Postgres of the resource's own (not the lock service's,
 * which the nemeses fault), where it keeps each key's value and fence.
 */
export async function startResourceDb(group: ProcessGroup, ports: PortPlan, runDir: string): Promise<ServerNode> {
  const cluster = await startPostgresCluster(group, ports, { runDir, durable: false, name: "resource-db" });
  return cluster.nodes[0];
}
