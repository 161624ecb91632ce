// Containers and networks outlive the process that made them: every one a run
// makes carries labels naming the run and its owner (this machine, the runner's
// pid and that process's start time, so a reused pid is no owner), and whatever
// carries an owner that is gone is removed by the next run that starts, or by
// `npm run reap` (testcontainers' session label and reaper, without a container
// of its own).
import type Docker from "dockerode";
import { hostname } from "node:os";
import { readFileSync } from "node:fs";
import { listContainers } from "./engine.ts";

export const LABEL_OWNER = "fencecheck.owner";
export const LABEL_RUN = "fencecheck.run";
export const LABEL_SERVER = "fencecheck.server";

/** The kernel's start time of a process (clock ticks since boot), or null when it does not exist. */
function startTime(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name (field 2) may hold spaces; the fields after its ")" do not.
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19] ?? null;
  } catch {
    return null;
  }
}

/** This runner as an owner label: "host/pid/start". */
export function ownerLabel(pid = process.pid): string {
  return `${hostname()}/${pid}/${startTime(pid) ?? "?"}`;
}

/** Whether the owner a label names is alive; an owner on another machine is taken to be. */
export function ownerAlive(label: string): boolean {
  const [host, pid, start] = label.split("/");
  if (host !== hostname()) return true;
  const now = startTime(Number(pid));
  return now !== null && now === start;
}

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
