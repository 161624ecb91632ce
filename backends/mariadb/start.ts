// The mariadb backend's start: the run's server (backends/mariadb/server.ts), then
// the database its lock clients keep their leases and fences in, with the tables.
import type { Cluster } from "../../cluster/cluster.ts";
import type { BackendContext } from "../../core/index.ts";
import { startMariadbCluster } from "./server.ts";
import { connectAs, lockTablesSql, RUNS_OWN, type MariadbAccess } from "./session.ts";

/** Statements on a server directly (not through a worker's proxy), as `access` says; the database need not exist yet. */
export async function onServer(node: { host: string; port: number }, statements: readonly string[], access: MariadbAccess = RUNS_OWN, timeoutMs = 10_000): Promise<void> {
  await connectAs(node, { ...access, database: "" }, timeoutMs, async (c) => {
    for (const sql of statements) await c.query({ sql, timeout: timeoutMs });
  });
}

export async function startMariadbBackend(ctx: BackendContext, o: { durable: boolean }): Promise<Cluster> {
  const cluster = await startMariadbCluster(ctx.group, ctx.ports, { runDir: ctx.runDir, durable: o.durable, deployment: ctx.deployment });
  await onServer(cluster.nodes[0], [`CREATE DATABASE IF NOT EXISTS ${RUNS_OWN.database}`, ...lockTablesSql(RUNS_OWN.database)]);
  return cluster;
}
