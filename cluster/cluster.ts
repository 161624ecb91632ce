// What a running lock service is to the rest of the run: its nodes, and the
// optional abilities a backend may offer the nemeses (Jepsen's separate
// interfaces for kill, pause and clock faults). Pausing a server is asked of the
// deployment it runs in (a SIGSTOP to a local process or to a container's).
import type { ProcessGroup } from "./processes.ts";
import type { PortPlan } from "./ports.ts";
import type { Deployment } from "./deployment.ts";

/** One server of a lock service as the harness reaches it. */
export interface ServerNode {
  /** "redis-1": the name in nemesis events, logs and run.json. */
  name: string;
  host: string;
  port: number;
}

/** Abilities a nemesis may need from a backend's cluster: kill + restart, skewClock. */
export type ClusterAbility = "kill" | "clock";

export interface Cluster {
  nodes: ServerNode[];
  /** Freeze one server (SIGSTOP, or the freezer of its container); false when it is not running. */
  pause(name: string): Promise<boolean>;
  /** Thaw it again. */
  resume(name: string): Promise<boolean>;
  /** Whether it is running now (not killed, not dead). */
  running(name: string): boolean;
  /** SIGKILL one node; it stays down until restart. */
  kill?(name: string): Promise<void>;
  /** Start a killed node again (same port, same data directory). */
  restart?(name: string): Promise<void>;
  /** Move one node's wall clock to real time + offsetMs (0 puts it back). */
  skewClock?(name: string, offsetMs: number): Promise<void>;
  /** The members' own network (etcd): cut the components off from each other, or heal. */
  peers?: {
    partition(components: string[][]): Promise<void>;
    heal(): Promise<void>;
  };
  /** The member that leads now (consensus backends), or null when none is known. */
  leader?(): Promise<string | null>;
}

/**
 * Who each member is cut off from under a grudge's components: every member it
 * shares no component with. A member in no component is cut off from all; one in
 * two components (a bridge) reaches both sides.
 */
export function memberCuts(names: readonly string[], components: string[][]): Map<string, string[]> {
  const together = (a: string, b: string): boolean => components.some((c) => c.includes(a) && c.includes(b));
  return new Map(names.map((m) => [m, names.filter((o) => o !== m && !together(m, o))]));
}

/** How a cluster of members that talk to each other through the fault proxy (etcd, ZooKeeper) is started. */
export interface MemberClusterOptions {
  group: ProcessGroup;
  ports: PortPlan;
  runDir: string;
  toxiproxyUrl: string;
  /** Members: 3 unless a test wants another size. */
  size?: number;
  /** How long start and restart may take before they fail. */
  startTimeoutMs?: number;
  /** Where the members run (default: child processes of the group). */
  deployment?: Deployment;
  /**
   * Members talk to each other directly over their network, and a partition cuts
   * members off it (--partition-mode network, containers only), instead of through
   * the fault proxy's peer proxies.
   */
  directPeers?: boolean;
  /**
   * Whether the run cuts members apart through their peer proxies
   * (memberPartitions "proxy"; default true). Without, the peer proxies carry no
   * toxic of our fault proxy's own, so a real Toxiproxy serves them.
   */
  peerToxics?: boolean;
}

/** A consensus cluster: members that can be killed and restarted, a leader, a network of their own. */
export interface MemberCluster extends Cluster {
  kill(name: string): Promise<void>;
  restart(name: string): Promise<void>;
  leader(): Promise<string | null>;
  peers: NonNullable<Cluster["peers"]>;
}

/**
 * Pause, resume, kill and restart of a member cluster's members through their
 * deployment: a restart starts a killed member again with `respawn` (same port,
 * same data) and waits for `answering`.
 */
export function memberControls<M extends ServerNode>(
  deployment: Deployment,
  member: (name: string) => M,
  respawn: (m: M) => Promise<void>,
  answering: (name: string) => Promise<void>,
): Pick<MemberCluster, "pause" | "resume" | "running" | "kill" | "restart"> {
  return {
    pause: (name) => deployment.pause(member(name).name),
    resume: (name) => deployment.resume(member(name).name),
    running: (name) => deployment.running(name),
    async kill(name) {
      member(name);
      await deployment.kill(name);
    },
    async restart(name) {
      const m = member(name);
      if (deployment.running(name)) return;
      await deployment.kill(name);
      await respawn(m);
      await answering(name);
    },
  };
}

/**
 * A lock service of one server (Postgres, MariaDB): its node, and the nemeses'
 * controls through its deployment; `respawn` starts it again on its data after a
 * kill and returns once it answers.
 */
export function oneServer(deployment: Deployment, node: ServerNode, respawn: () => Promise<void>, what: string): Cluster {
  const member = (name: string): ServerNode => {
    if (name !== node.name) throw new Error(`no ${what} server named ${name} (there is ${node.name})`);
    return node;
  };
  return { nodes: [node], ...memberControls(deployment, member, respawn, async () => {}) };
}

/**
 * Member-to-member partitions on a container network (--partition-mode network):
 * every member outside the largest component leaves the run's network, and
 * joins it again at the heal. A member's network is all or nothing, so a
 * minority of two loses its own link too, and a bridge cannot be drawn: its
 * members stay.
 */
export function networkPartitions(deployment: Deployment, names: readonly string[]): NonNullable<Cluster["peers"]> {
  const network = deployment.network;
  if (!network) throw new Error(`members cannot be cut off their network in ${deployment.name} deployment`);
  const cutOff = new Set<string>();
  return {
    async partition(components) {
      const largest = [...components].sort((a, b) => b.length - a.length)[0] ?? [];
      const out = names.filter((n) => !largest.includes(n) && !cutOff.has(n));
      for (const n of out) cutOff.add(n);
      await Promise.all(out.map((n) => network.disconnect(n)));
    },
    async heal() {
      const back = [...cutOff];
      cutOff.clear();
      await Promise.all(back.map((n) => network.connect(n)));
    },
  };
}
