// One real Postgres server for a test file, made like a run's (initdb in a
// temporary run directory, the lock tables), stopped after its tests once
// `closing` (its clients) is done.
import { chmodSync } from "node:fs";
import pg from "pg";
import { beforeAll, afterAll } from "vitest";
import { ProcessGroup } from "../../../cluster/processes.ts";
import { PortPlan } from "../../../cluster/ports.ts";
import type { Cluster } from "../../../cluster/cluster.ts";
import type { ServerNode } from "../../../cluster/cluster.ts";
import { startPostgresBackend } from "../start.ts";
import type { BackendContext } from "../../../core/index.ts";
import { localDeployment } from "../../../cluster/deployment.ts";
import { pgConnection } from "../server.ts";
import { tempRunDir } from "../../../test/helpers.ts";

export interface PostgresServer {
  node(): ServerNode;
  cluster(): Cluster;
  group(): ProcessGroup;
  /** One statement on a connection of its own: what the server has. */
  sql<T extends pg.QueryResultRow>(text: string, values?: unknown[]): Promise<T[]>;
}

export function usePostgresServer(closing: () => Promise<unknown> = async () => {}): PostgresServer {
  let group: ProcessGroup;
  let cluster: Cluster;
  beforeAll(async () => {
    const dir = tempRunDir();
    // mkdtemp makes it 0700, and the server runs as the postgres user.
    chmodSync(dir, 0o755);
    group = new ProcessGroup(dir);
    const serverOptions = { skewableClocks: false, deploy: "local", external: null, pauseMode: "signal", memberPartitions: "proxy" } as const;
    const ctx: BackendContext = { group, deployment: localDeployment(group), ports: new PortPlan(0), runDir: dir, toxiproxyUrl: async () => "", serverOptions, options: {} };
    cluster = await startPostgresBackend(ctx, { durable: false, pooled: false });
  }, 30_000);
  afterAll(async () => {
    await closing();
    await group?.stopAll();
  });
  const sql = async <T extends pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<T[]> => {
    const c = new pg.Client(pgConnection(cluster.nodes[0]));
    await c.connect();
    try {
      return (await c.query<T>(text, values)).rows;
    } finally {
      await c.end();
    }
  };
  return { node: () => cluster.nodes[0], cluster: () => cluster, group: () => group, sql };
}
