// Three Hazelcast 5.4 members (java/HazelcastMember.java, an embedded member with
// its configuration from its arguments) as local JVMs of the run's process group
// (its teardown and reaper SIGKILL them, as they do ZooKeeper's), on 127.0.0.1 at
// ports of the run's own, each with its data directory (hosts file, status file)
// under data/hz-N and its log in logs/hz-N.log. They meet through the fault proxy
// (peers.ts), so a partition can cut members apart.
//
// In docker mode (--deploy docker) each member is a container on the run's network
// instead, as ZooKeeper's are: the same program and arguments, the environment's
// jars and classes mounted read-only at the paths of this machine, the members
// meeting over the network by its aliases (hz-1, ...) without links (a container's
// loopback is its own), and a partition cutting the members outside the largest side
// off that network (cluster.ts networkPartitions). Clients still reach each member
// through the fault proxy, at its port published on this machine's loopback.
//
// Three members, all of them CP members (cp-member-count 3, group-size 3): the
// fewest that make a CP group with a majority to lose. Five (3 CP + 2 AP, so that
// a CP seat freed by a kill is filled at once) would be five JVMs of ~150 MB and a
// few seconds of CPU each at start, beside the clients' JVMs, on two shared cores.
// With three, a killed member's seat is refilled by its own restart: without CP
// persistence (Enterprise) it comes back as a new member, the seat of the old one is
// freed after missing-cp-member-auto-removal-seconds, and the new one promotes
// itself into it (HazelcastMember.java): that is a heal. A second member lost before
// that leaves the CP groups without a majority, for good: a CP group that has lost
// its majority cannot be recovered short of a reset of the CP Subsystem.
//
// Timing from the run's --ttl: the CP session's TTL (what a FencedLock's hold lives
// on while its client is silent) is --ttl rounded up to whole seconds, at least 2:
// Hazelcast counts in whole seconds and the TTL must exceed the session heartbeat,
// whose least is 1 s. The auto-removal of a missing CP member may not be shorter
// than the session TTL: it is that, at least 5 s (so that a member restarted within a
// run's restart delay comes back into a CP group of two, not of one).
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { waitForMembers } from "../../cluster/processes.ts";
import { localDeployment } from "../../cluster/deployment.ts";
import { memberControls, networkPartitions, type MemberCluster, type MemberClusterOptions, type ServerNode } from "../../cluster/cluster.ts";
import { HAZELCAST_MEMBER, hazelcastClasspath } from "./programs.ts";
import { HzPeerLinks } from "./peers.ts";
import { hostsFile } from "../../cluster/peer-links.ts";

export interface HzMember extends ServerNode {
  /** 0-based, its place in the member list. */
  index: number;
}

/** What a member's status file says (HazelcastMember.java writes it every 500 ms). */
export interface HzStatus {
  name: string;
  uuid: string;
  members: number;
  ready: boolean;
  discovered?: boolean;
  cp_member?: boolean;
  cp_members?: string[];
  cp_groups?: string[];
  leader?: string | null;
  unsafe?: boolean;
  error?: string;
}

export interface HzClusterOptions extends MemberClusterOptions {
  /** The run's --ttl: the CP session TTL is made of it. */
  ttlMs: number;
  /**
   * No CP members (cp-member-count 0): the CP Subsystem's "unsafe mode", its data
   * structures, FencedLock among them, kept in the partitions of the AP data grid
   * (a primary and its backup), without Raft.
   */
  unsafe?: boolean;
}

export interface HzCluster extends MemberCluster {
  nodes: HzMember[];
  /** What each member says of the CP Subsystem now. */
  status(name: string): HzStatus | null;
  /** The members' CP timing, as they were told it. */
  timing: HzTiming;
}

export interface HzTiming {
  sessionTtlS: number;
  heartbeatS: number;
  autoRemovalS: number;
}

export const CP_MEMBERS = 3;
export const CLUSTER_NAME = "fencecheck";

/** The CP timing the members get for a run's --ttl (the comment at the top says why). */
export function hzTiming(ttlMs: number): HzTiming {
  const sessionTtlS = Math.max(2, Math.ceil(ttlMs / 1000));
  return { sessionTtlS, heartbeatS: 1, autoRemovalS: Math.max(5, sessionTtlS) };
}

export async function startHzCluster(opts: HzClusterOptions): Promise<HzCluster> {
  const { group, ports, runDir } = opts;
  const size = opts.size ?? CP_MEMBERS;
  const deployment = opts.deployment ?? localDeployment(group);
  const direct = deployment.name !== "local";
  // Three JVMs forming a cluster, then a CP group, on shared cores: 10 to 25 s here (a container's first start is slower).
  const startTimeoutMs = opts.startTimeoutMs ?? (direct ? 120_000 : 90_000);
  const timing = hzTiming(opts.ttlMs);
  const unsafe = opts.unsafe ?? false;
  const classpath = hazelcastClasspath();
  // What a container must see of this machine: the environment's classes directory and the folders of its jars.
  const mounts = [...new Set(classpath.map((p) => (p.endsWith(".jar") ? dirname(p) : p)))];
  const nodes: HzMember[] = [];
  for (let index = 0; index < size; index++) nodes.push({ name: `hz-${index + 1}`, host: "127.0.0.1", port: await ports.take(), index });
  const links = direct ? null : await HzPeerLinks.create(opts.toxiproxyUrl, `fc-${process.pid}-`, nodes);
  if (links) group.onStop(() => links.remove());
  const dataDir = (m: HzMember): string => join(runDir, "data", m.name);
  const statusFile = (m: HzMember): string => join(dataDir(m), "status.json");
  const logFile = (m: HzMember): string => join(runDir, "logs", `${m.name}.log`);

  const spawnMember = async (m: HzMember): Promise<void> => {
    mkdirSync(dataDir(m), { recursive: true });
    if (!direct) writeFileSync(join(dataDir(m), "hosts"), hostsFile(m.index + 1, nodes.map((n) => n.name)));
    // A restarted member is a new one: what the old one said is not its.
    rmSync(statusFile(m), { force: true });
    const args = [
      // jvm.sh's light flags, with more heap (a member holds the Raft logs and the partition tables) and one processor as far as its pools know.
      "-Xss512k",
      "-Xms32m",
      "-Xmx160m",
      "-XX:+UseSerialGC",
      "-XX:TieredStopAtLevel=1",
      "-XX:-UsePerfData",
      "-XX:ActiveProcessorCount=1",
      // Locally: the member names through the links. In a container: the network's own names, looked up
      // again each time (a member joined again after a partition may have a new address).
      ...(direct ? ["-Dsun.net.inetaddr.ttl=0"] : [`-Djdk.net.hosts.file=${join(dataDir(m), "hosts")}`]),
      "-cp",
      classpath.join(":"),
      "HazelcastMember",
      ...["--name", m.name, "--port", String(m.port), "--members", nodes.map((n) => `${n.name}:${n.port}`).join(",")],
      ...["--cluster", CLUSTER_NAME],
      ...(unsafe ? ["--unsafe"] : ["--cp-members", String(CP_MEMBERS), "--group-size", String(CP_MEMBERS)]),
      ...["--session-ttl", String(timing.sessionTtlS), "--heartbeat", String(timing.heartbeatS), "--auto-removal", String(timing.autoRemovalS)],
      ...["--status", statusFile(m)],
      // In a container the names are the network's aliases, the same names (deployment.memberHost).
      ...(direct ? ["--bind-any"] : []),
    ];
    await deployment.start({ name: m.name, program: HAZELCAST_MEMBER, args, dataDir: dataDir(m), logFile: logFile(m), ports: [m.port], mounts });
  };

  const member = (name: string): HzMember => {
    const m = nodes.find((n) => n.name === name);
    if (!m) throw new Error(`no Hazelcast member named ${name}`);
    return m;
  };
  const status = (name: string): HzStatus | null => {
    try {
      return JSON.parse(readFileSync(statusFile(member(name)), "utf8")) as HzStatus;
    } catch {
      return null;
    }
  };
  const waitFor = (names: string[], what: string, ready: (s: HzStatus | null) => boolean): Promise<void> =>
    waitForMembers(names, what, async (n) => ready(status(n)), { running: (n) => deployment.running(n), logFile: (n) => logFile(member(n)), timeoutMs: startTimeoutMs, stepMs: 250 });

  await Promise.all(nodes.map(spawnMember));
  // Ready: each member a CP member and its CP calls answered by the DEFAULT group, where the locks live;
  // in unsafe mode, all members in one cluster and a CP call answered by a partition's owner.
  try {
    await waitFor(
      nodes.map((m) => m.name),
      unsafe ? `in one cluster of ${size} with its CP Subsystem (unsafe mode) answering` : `a CP member of a formed CP group (${CP_MEMBERS} CP members)`,
      (s) => s?.ready === true && (unsafe ? s.members === size : s.cp_member === true && (s.cp_members?.length ?? 0) === CP_MEMBERS),
    );
  } catch (err) {
    const seen = nodes.map((m) => `${m.name}: ${JSON.stringify(status(m.name))}`).join("\n");
    throw new Error(`the Hazelcast members formed no ${unsafe ? "cluster" : "CP group"}: ${(err as Error).message}\nwhat each member said last:\n${seen}`);
  }

  return {
    nodes,
    status,
    timing,
    // A restarted member has joined the cluster once it writes its status; its CP seat comes after the auto-removal of its old self.
    ...memberControls(deployment, member, spawnMember, (name) => waitFor([name], "joined", (s) => s !== null && s.members > 0)),
    async leader() {
      // The leader of the DEFAULT group that most members name (an old leader cut off may still name itself).
      const named = nodes.map((m) => status(m.name)?.leader).filter((l): l is string => typeof l === "string");
      const votes = new Map<string, number>();
      for (const l of named) votes.set(l, (votes.get(l) ?? 0) + 1);
      return [...votes.entries()].sort((a, b) => b[1] - a[1])[0]?.[0] ?? null;
    },
    peers: links ? { partition: (components) => links.partition(components), heal: () => links.heal() } : networkPartitions(deployment, nodes.map((m) => m.name)),
  };
}
