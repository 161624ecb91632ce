// Containers and networks outlive the process that made them: every one a run
// makes carries labels naming the run and its owner (this machine, the runner's
// pid and that process's start time, so a reused pid is no owner), and whatever
// carries an owner that is gone is removed by the next run that starts, or by
// `npm run reap` (testcontainers' session label and reaper, without a container
// of its own).
import type Docker from "dockerode";
import { listContainers } from "./engine.ts";
import { ownerAlive } from "../lib/owner.ts";

export const LABEL_OWNER = "fencecheck.owner";
export const LABEL_RUN = "fencecheck.run";
export const LABEL_SERVER = "fencecheck.server";

export interface Reaped {
  containers: string[];
  networks: string[];
}

/** Remove every container and network of a fencecheck run whose owner is gone (all of them with `all`). */
export async function reapLeftovers(docker: Docker, opts: { all?: boolean } = {}): Promise<Reaped> {
  const filters = JSON.stringify({ label: [LABEL_OWNER] });
  const dead = (labels: Record<string, string> | undefined): boolean => opts.all === true || !ownerAlive(labels?.[LABEL_OWNER] ?? "");
  const containers = (await listContainers(docker, { all: true, filters })).filter((c) => dead(c.Labels));
  await Promise.all(containers.map((c) => docker.getContainer(c.Id).remove({ force: true, v: true }).catch(() => {})));
  const networks = (await docker.listNetworks({ filters })).filter((n) => dead(n.Labels));
  await Promise.all(networks.map((n) => docker.getNetwork(n.Id).remove().catch(() => {})));
  return { containers: containers.map((c) => (c.Names?.[0] ?? c.Id).replace(/^\//, "")), networks: networks.map((n) => n.Name) };
}
