// What the resource's own Postgres (--resource postgres) holds after the
// torture killed it mid-writes: the run kept its data directory (--keep-data),
// a postmaster of ours starts on it (crash recovery first, as after any
// SIGKILL), the resource's table is read, and the postmaster is stopped.
import { realpathSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";
import { ProcessGroup } from "../cluster/processes.ts";
import { PortPlan } from "../cluster/ports.ts";
import { localDeployment } from "../cluster/deployment.ts";
import { pgConnection, startPostmaster } from "../backends/postgres/server.ts";
import type { StoreRow } from "../resource/index.ts";

/** The run's resource-db name (backends/postgres/start.ts startResourceDb). */
export const RESOURCE_DB = "resource-db";

/** The rows of the resource's table in the data directory the run at `runDir` kept, by key. */
export async function keptResourceTable(runDir: string, logFile: string): Promise<Map<string, StoreRow>> {
  // data/resource-db may be a link to a directory the postgres user can reach (backends/postgres/server.ts).
  const dir = realpathSync(join(runDir, "data", RESOURCE_DB));
  const group = new ProcessGroup(`torture ${dir}`);
  const ports = new PortPlan(0);
  try {
    const node = { name: RESOURCE_DB, host: "127.0.0.1", port: await ports.take() };
    await startPostmaster(localDeployment(group), node, dir, logFile, { runDir, durable: false });
    const c = new pg.Client({ ...pgConnection(node), connectionTimeoutMillis: 5000 });
    c.on("error", () => {});
    await c.connect();
    try {
      const rows = (await c.query<{ key: string; value: unknown; fence: string | null; decisions: string }>("SELECT key, value, fence, decisions FROM fencecheck_resource")).rows;
      return new Map(rows.map((r) => [r.key, { value: r.value, fence: r.fence === null ? null : Number(r.fence), decisions: Number(r.decisions) }]));
    } finally {
      await c.end().catch(() => {});
    }
  } finally {
    await group.stopAll();
    ports.release();
  }
}
