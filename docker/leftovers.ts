// Containers and networks outlive the process that made them: every one a run
// makes carries labels naming the run and its owner (this machine, the runner's
// pid and that process's start time, so a reused pid is no owner), and whatever
// carries an owner that is gone is removed by the next run that starts, or by
// `npm run reap` (testcontainers' session label and reaper, without a container
// of its own). With them go the port forwards a killed container can leave in
// iptables (dnat.ts).
import type Docker from "dockerode";
import { listContainers } from "./engine.ts";
import { ownerAlive } from "../lib/owner.ts";
import { removeStaleForwards } from "./dnat.ts";

export const LABEL_OWNER = "fencecheck.owner";
export const LABEL_RUN = "fencecheck.run";
export const LABEL_SERVER = "fencecheck.server";

export interface Reaped {
  containers: string[];
  networks: string[];
  /** The networks whose port forwards outlived their containers (dnat.ts). */
  forwards: string[];
}

/** Remove every container and network of a fencecheck run whose owner is gone (all of them with `all`). */
export async function reapLeftovers(docker: Docker, opts: { all?: boolean } = {}): Promise<Reaped> {
  const filters = JSON.stringify({ label: [LABEL_OWNER] });
  const dead = (labels: Record<string, string> | undefined): boolean => opts.all === true || !ownerAlive(labels?.[LABEL_OWNER] ?? "");
  const containers = (await listContainers(docker, { all: true, filters })).filter((c) => dead(c.Labels));
  await Promise.all(containers.map((c) => docker.getContainer(c.Id).remove({ force: true, v: true }).catch(() => {})));
  const networks = (await docker.listNetworks({ filters })).filter((n) => dead(n.Labels));
  await Promise.all(networks.map((n) => docker.getNetwork(n.Id).remove().catch(() => {})));
  // What is left of every container on the machine: a forward of none of them is stale.
  const local = typeof (docker as unknown as { modem?: { socketPath?: unknown } }).modem?.socketPath === "string";
  const forwards = await removeStaleForwards(async () => (await listContainers(docker, { all: true })).map((c) => c.Id), local);
  return { containers: containers.map((c) => (c.Names?.[0] ?? c.Id).replace(/^\//, "")), networks: networks.map((n) => n.Name), forwards };
}

/** "2 container(s), 1 network(s) and the port forwards of 1 network(s)": what a removal took. */
export function reapedText(r: Reaped): string {
  const parts = [`${r.containers.length} container(s)`, `${r.networks.length} network(s)`];
  if (r.forwards.length) parts.push(`the port forwards of ${r.forwards.length} network(s) whose containers are gone`);
  return parts.slice(0, -1).join(", ") + " and " + parts.at(-1);
}
