// Three real etcd members on loopback, with the election settings docs/backends.md gives
// (50 ms heartbeats, 500 ms election timeout, pre-vote so a member that comes back
// from a partition does not depose a healthy leader with an inflated term). Each
// member has its data directory and log under the run directory, and is started
// through the run's process group, whose teardown SIGKILLs it: on SIGTERM a leader
// spends seconds handing over leadership.
//
// Clients reach the members through the per-worker links the runner makes from
// `nodes`; the members reach each other through their peer proxies
// (etcd-peers.ts), which is what lets a nemesis cut members off from each other.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { waitForMembers } from "../../cluster/processes.ts";
import { localDeployment } from "../../cluster/deployment.ts";
import { memberControls, networkPartitions, type MemberCluster, type MemberClusterOptions } from "../../cluster/cluster.ts";
import type { ServerNode } from "../../cluster/cluster.ts";
import { createPeerProxies } from "./peers.ts";
import { EtcdAdmin } from "./admin.ts";

import { ETCD_SERVER } from "./programs.ts";

export { etcdBinary } from "./programs.ts";

export interface EtcdMember extends ServerNode {
  /** The member's real peer port; the others reach it through `peerProxyPort`. */
  peerPort: number;
  peerProxyPort: number;
  /** Hex, as etcd prints it and as X-Server-From carries it. */
  id: string;
}

export type EtcdClusterOptions = MemberClusterOptions;

export interface EtcdCluster extends MemberCluster {
  nodes: EtcdMember[];
  /** Whether a linearizable read on this member succeeds (it has a leader with a quorum). */
  healthy(name: string): Promise<boolean>;
}

const ELECTION = ["--heartbeat-interval", "50", "--election-timeout", "500", "--pre-vote=true"];

export async function startEtcdCluster(opts: EtcdClusterOptions): Promise<EtcdCluster> {
  const { group, ports, runDir } = opts;
  const size = opts.size ?? 3;
  const deployment = opts.deployment ?? localDeployment(group);
  const direct = opts.directPeers ?? false;
  if (direct && !deployment.network) throw new Error(`etcd members cannot be cut off their network in ${deployment.name} deployment`);
  const startTimeoutMs = opts.startTimeoutMs ?? 20_000;
  const planned: Array<{ name: string; port: number; peerPort: number }> = [];
  for (let i = 1; i <= size; i++) planned.push({ name: `etcd-${i}`, port: await ports.take(), peerPort: await ports.take() });

  // Named after the runner's pid, so two runs can share one fault proxy (--toxiproxy).
  // The peer proxies listen where the members can reach this machine; a member is
  // reached by them on its peer port here (published on loopback, for a container).
  const hostAddress = direct ? "127.0.0.1" : await deployment.hostAddress(ETCD_SERVER);
  const peers = await createPeerProxies(opts.toxiproxyUrl, `fc-${process.pid}-`, planned, hostAddress, opts.peerToxics ?? true);
  group.onStop(() => peers.remove());
  const nodes: EtcdMember[] = planned.map((m) => ({ ...m, host: "127.0.0.1", peerProxyPort: peers.of(m.name).port, id: "" }));
  const peerUrl = (m: EtcdMember): string =>
    direct ? `http://${deployment.memberHost(m.name)}:${m.peerPort}` : `http://${hostAddress}:${m.peerProxyPort}`;
  const initialCluster = nodes.map((m) => `${m.name}=${peerUrl(m)}`).join(",");
  // A token of this run: member ids derive from it, so no member of another run can join.
  const token = `fencecheck-${process.pid}-${Date.now()}`;
  const admins = new Map(nodes.map((m) => [m.name, new EtcdAdmin(m.name, m.port)]));
  group.onStop(async () => admins.forEach((a) => a.close()));

  const spawnMember = async (m: EtcdMember): Promise<void> => {
    const dataDir = join(runDir, "data", m.name);
    mkdirSync(dataDir, { recursive: true });
    const args = [
      "--name", m.name,
      "--data-dir", dataDir,
      "--listen-client-urls", `http://${deployment.bindHost}:${m.port}`,
      "--advertise-client-urls", `http://127.0.0.1:${m.port}`,
      "--listen-peer-urls", `http://${deployment.bindHost}:${m.peerPort}`,
      "--initial-advertise-peer-urls", peerUrl(m),
      // Ignored once the data directory holds a member (a restart), as etcd does.
      "--initial-cluster", initialCluster,
      "--initial-cluster-token", token,
      "--initial-cluster-state", "new",
      ...ELECTION,
      "--logger", "zap",
      "--log-outputs", "stderr",
    ];
    await deployment.start({ name: m.name, program: ETCD_SERVER, args, dataDir, logFile: join(runDir, "logs", `${m.name}.log`), ports: [m.port, m.peerPort] });
  };

  const waitFor = (names: string[], what: string, ready: (name: string) => Promise<boolean>): Promise<void> =>
    waitForMembers(names, what, ready, { running: (n) => deployment.running(n), logFile: (n) => join(runDir, "logs", `${n}.log`), timeoutMs: startTimeoutMs, stepMs: 50 });

  await Promise.all(nodes.map(spawnMember));
  await waitFor(nodes.map((m) => m.name), "healthy", (n) => admins.get(n)!.healthy());
  const ids = await admins.get(nodes[0].name)!.memberIds();
  for (const m of nodes) {
    const id = ids.get(m.name);
    if (!id) throw new Error(`${m.name} is not in the member list of the cluster it started (${[...ids.keys()].join(", ")})`);
    m.id = id;
  }
  peers.setIds(ids);

  const member = (name: string): EtcdMember => {
    const m = nodes.find((n) => n.name === name);
    if (!m) throw new Error(`no etcd member named ${name}`);
    return m;
  };

  return {
    nodes,
    // Answering at all is enough after a restart: a linearizable read would also
    // wait for a quorum, which a nemesis may be withholding on purpose.
    ...memberControls(deployment, member, spawnMember, (name) => waitFor([name], "answering", async (n) => (await admins.get(n)!.status()) !== null)),
    async leader() {
      // The view of the member with the highest term that answers: a deposed leader
      // cut off from the rest may still believe in itself for an election timeout.
      const views = (await Promise.all(nodes.map((m) => admins.get(m.name)!.status()))).filter((v) => v !== null && v.leader !== "");
      views.sort((a, b) => b!.term - a!.term);
      const id = views[0]?.leader;
      return nodes.find((m) => m.id === id)?.name ?? null;
    },
    peers: direct
      ? networkPartitions(deployment, nodes.map((m) => m.name))
      : {
          partition: (components) => peers.partition(components),
          heal: () => peers.heal(),
        },
    healthy: (name) => admins.get(member(name).name)!.healthy(),
  };
}

