// One real MariaDB server for a test file, made like a run's (install-db in a
// temporary run directory, the lock database and tables), stopped after its
// tests once `closing` (its clients) is done.
import { chmodSync } from "node:fs";
import type { RowDataPacket } from "mysql2";
import { beforeAll, afterAll } from "vitest";
import { ProcessGroup } from "../../../cluster/processes.ts";
import { PortPlan } from "../../../cluster/ports.ts";
import type { Cluster, ServerNode } from "../../../cluster/cluster.ts";
import type { BackendContext } from "../../../core/index.ts";
import { localDeployment } from "../../../cluster/deployment.ts";
import { startMariadbBackend } from "../start.ts";
import { connectAs, RUNS_OWN } from "../session.ts";
import { tempRunDir } from "../../../test/helpers.ts";

export interface MariadbServer {
  node(): ServerNode;
  cluster(): Cluster;
  group(): ProcessGroup;
  dir(): string;
  /** One statement as root on a connection of its own, in the lock database: what the server has. */
  sql<T>(text: string, values?: unknown[]): Promise<T[]>;
}

export function useMariadbServer(closing: () => Promise<unknown> = async () => {}): MariadbServer {
  let group: ProcessGroup;
  let cluster: Cluster;
  let dir: string;
  beforeAll(async () => {
    dir = tempRunDir("fc-mariadb-");
    // mkdtemp makes it 0700, and the server runs as the mysql user.
    chmodSync(dir, 0o755);
    group = new ProcessGroup(dir);
    const serverOptions = { skewableClocks: false, deploy: "local", external: null, pauseMode: "signal", memberPartitions: "proxy" } as const;
    const ctx: BackendContext = { group, deployment: localDeployment(group), ports: new PortPlan(0), runDir: dir, toxiproxyUrl: async () => "", serverOptions, options: {} };
    cluster = await startMariadbBackend(ctx, { durable: false });
  }, 30_000);
  afterAll(async () => {
    await closing();
    await group?.stopAll();
  });
  const sql = <T>(text: string, values: unknown[] = []): Promise<T[]> =>
    connectAs(cluster.nodes[0], RUNS_OWN, 5000, async (c) => (await c.query<RowDataPacket[]>(text, values))[0] as T[]);
  return { node: () => cluster.nodes[0], cluster: () => cluster, group: () => group, dir: () => dir, sql };
}
