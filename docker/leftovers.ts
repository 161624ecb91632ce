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

/** Containers and networks of fencecheck runs, by id and name (a container's state too). */
export interface Labelled {
  containers: Array<{ id: string; name: string; state: string }>;
  networks: Array<{ id: string; name: string }>;
}

/** The containers (stopped ones too) and networks whose owner label `which` picks. */
export async function labelledBy(docker: Docker, which: (owner: string) => boolean): Promise<Labelled> {
  const filters = JSON.stringify({ label: [LABEL_OWNER] });
  const picked = (labels: Record<string, string> | undefined): boolean => which(labels?.[LABEL_OWNER] ?? "");
  const containers = (await listContainers(docker, { all: true, filters })).filter((c) => picked(c.Labels));
  const networks = (await docker.listNetworks({ filters })).filter((n) => picked(n.Labels));
  return {
    containers: containers.map((c) => ({ id: c.Id, name: (c.Names?.[0] ?? c.Id).replace(/^\//, ""), state: c.State })),
    networks: networks.map((n) => ({ id: n.Id, name: n.Name })),
  };
}

/** Remove them, containers first (a network with members cannot go); one already gone is no error. */
export async function removeLabelled(docker: Docker, found: Labelled): Promise<void> {
  await Promise.all(found.containers.map((c) => docker.getContainer(c.id).remove({ force: true, v: true }).catch(() => {})));
  await Promise.all(found.networks.map((n) => docker.getNetwork(n.id).remove().catch(() => {})));
}

/** Remove every container and network of a fencecheck run whose owner is gone (all of them with `all`). */
export async function reapLeftovers(docker: Docker, opts: { all?: boolean } = {}): Promise<Reaped> {
  const found = await labelledBy(docker, (owner) => opts.all === true || !ownerAlive(owner));
  await removeLabelled(docker, found);
  // What is left of every container on the machine: a forward of none of them is stale.
  const local = typeof (docker as unknown as { modem?: { socketPath?: unknown } }).modem?.socketPath === "string";
  const forwards = await removeStaleForwards(async () => (await listContainers(docker, { all: true })).map((c) => c.Id), local);
  return { containers: found.containers.map((c) => c.name), networks: found.networks.map((n) => n.name), forwards };
}

/** "2 container(s), 1 network(s) and the port forwards of 1 network(s)": what a removal took. */
export function reapedText(r: Reaped): string {
  const parts = [`${r.containers.length} container(s)`, `${r.networks.length} network(s)`];
  if (r.forwards.length) parts.push(`the port forwards of ${r.forwards.length} network(s) whose containers are gone`);
  return parts.slice(0, -1).join(", ") + " and " + parts.at(-1);
}
