// Three real ZooKeeper 3.8 servers (Debian's package) on loopback, started as the
// foreground QuorumPeerMain (docs/backends.md, ZooKeeper), each with its data directory, zoo.cfg,
// log4j settings and hosts file under data/zk-N of the run directory and its log in
// logs/zk-N.log. They are child processes of the run's process group (its teardown
// and reaper SIGKILL them, as they do etcd), and reach each other through the
// fault proxy (zookeeper-peers.ts), so a partition can cut members apart. In
// docker mode each is a container of backends/zookeeper/docker/ on the run's network, the
// members reach each other there by name, and a partition cuts a member off that
// network (as etcd's --partition-mode network does).
//
// Timing is scaled down from the defaults so a run of seconds sees elections and
// expiries: a 100 ms tick, followers that lose the leader for a second (syncLimit
// 10) give up on it, a new leader waits 2 s for its followers (initLimit 20), and
// sessions of 200 ms to 10 min (the lock clients ask for --ttl). The JVM is kept small (the machine is shared): 256 MB of heap at most,
// the serial collector, one processor as far as the JVM's pools know.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { waitForMembers } from "../../cluster/processes.ts";
import { localDeployment, type Deployment } from "../../cluster/deployment.ts";
import { memberControls, networkPartitions, type MemberCluster, type MemberClusterOptions } from "../../cluster/cluster.ts";
import type { ServerNode } from "../../cluster/cluster.ts";
import { ZkPeerProxies } from "./peers.ts";
import { hostsFile } from "../../cluster/peer-links.ts";
import { fourLetterWord, zkMode } from "./admin.ts";
import { sleep } from "../../lib/index.ts";
import { ZK_CLASSPATH, ZOOKEEPER_SERVER } from "./programs.ts";

export { ZK_CLASSPATH };

export interface ZkMember extends ServerNode {
  /** 1-based, as in its myid file and its server.N line. */
  id: number;
  quorumPort: number;
  electionPort: number;
}

export interface ZkCluster extends MemberCluster {
  nodes: ZkMember[];
}

const TICK_MS = 100;

function zooCfg(m: ZkMember, dataDir: string, all: ZkMember[], deployment: Deployment): string {
  const direct = deployment.name !== "local";
  return [
    `tickTime=${TICK_MS}`,
    "initLimit=20",
    "syncLimit=10",
    `dataDir=${dataDir}`,
    `clientPort=${m.port}`,
    `clientPortAddress=${deployment.bindHost}`,
    // In a container the member's own name resolves to its address on the run's
    // network, which a member cut off and joined again may not get back: the
    // quorum and election ports listen on every address instead.
    ...(direct ? ["quorumListenOnAllIPs=true"] : []),
    // Else the AdminServer takes 8080.
    "admin.enableServer=false",
    "4lw.commands.whitelist=srvr,mntr,ruok",
    `minSessionTimeout=${2 * TICK_MS}`,
    "maxSessionTimeout=600000",
    // The transaction log grows by 64 MB at a time by default; runs are small.
    "preAllocSize=1024",
    ...all.map((o) => `server.${o.id}=${direct ? deployment.memberHost(o.name) : o.name}:${o.quorumPort}:${o.electionPort}`),
    "",
  ].join("\n");
}

const LOG4J = [
  "log4j.rootLogger=INFO, CONSOLE",
  "log4j.appender.CONSOLE=org.apache.log4j.ConsoleAppender",
  "log4j.appender.CONSOLE.layout=org.apache.log4j.PatternLayout",
  "log4j.appender.CONSOLE.layout.ConversionPattern=%d{ISO8601} - %-5p [%t:%C{1}@%L] - %m%n",
  "",
].join("\n");

export async function startZkCluster(opts: MemberClusterOptions): Promise<ZkCluster> {
  const { group, ports, runDir } = opts;
  const size = opts.size ?? 3;
  const deployment = opts.deployment ?? localDeployment(group);
  // Containers reach each other over the run's network, by name. Through the
  // fault proxy they cannot: each member's way to the others is a loopback
  // address of its own (zookeeper-peers.ts), and a container's loopback is its own.
  const direct = deployment.name !== "local";
  if (opts.directPeers && !direct) throw new Error(`ZooKeeper members cannot be cut off their network in ${deployment.name} deployment`);
  // A JVM in a container: a first start of the image's JVM is slower.
  const startTimeoutMs = opts.startTimeoutMs ?? (direct ? 60_000 : 30_000);
  const nodes: ZkMember[] = [];
  for (let id = 1; id <= size; id++)
    nodes.push({ name: `zk-${id}`, host: "127.0.0.1", id, port: await ports.take(), quorumPort: await ports.take(), electionPort: await ports.take() });
  const peers = direct
    ? null
    : await ZkPeerProxies.create(opts.toxiproxyUrl, `fc-${process.pid}-`, nodes.map((m) => ({ name: m.name, quorumPort: m.quorumPort, electionPort: m.electionPort })), opts.peerToxics ?? true);
  if (peers) group.onStop(() => peers.remove());
  const logFile = (m: ZkMember): string => join(runDir, "logs", `${m.name}.log`);

  const spawnMember = async (m: ZkMember): Promise<void> => {
    const dataDir = join(runDir, "data", m.name);
    mkdirSync(dataDir, { recursive: true });
    // Written again on a restart: the same contents, and the snapshots and logs beside them stay.
    writeFileSync(join(dataDir, "myid"), `${m.id}\n`);
    writeFileSync(join(dataDir, "zoo.cfg"), zooCfg(m, dataDir, nodes, deployment));
    writeFileSync(join(dataDir, "log4j.properties"), LOG4J);
    if (!direct) writeFileSync(join(dataDir, "hosts"), hostsFile(m.id, nodes.map((n) => n.name)));
    const args = [
      "-Xmx256m",
      "-Xms32m",
      "-XX:+UseSerialGC",
      "-XX:ActiveProcessorCount=1",
      // The C1 compiler only: a short-lived server gains little from C2 and pays for it in CPU at start.
      "-XX:TieredStopAtLevel=1",
      // Locally: the member names through the proxies. In a container: the
      // network's own names, looked up again each time (a member joined again
      // after a partition may have a new address; the JVM keeps one for 30 s).
      ...(direct ? ["-Dsun.net.inetaddr.ttl=0"] : [`-Djdk.net.hosts.file=${join(dataDir, "hosts")}`]),
      `-Dzookeeper.log.dir=${dataDir}`,
      `-Dlog4j.configuration=file:${join(dataDir, "log4j.properties")}`,
      // Election connections to a member that is cut off give up after 1 s, not 5,
      // and a member that hears no votes asks again at least once a second (the
      // default backs off to a minute, longer than a whole run).
      "-Dzookeeper.cnxTimeout=1000",
      "-Dzookeeper.fastleader.maxNotificationInterval=1000",
      "-cp",
      ZK_CLASSPATH.join(":"),
      "org.apache.zookeeper.server.quorum.QuorumPeerMain",
      join(dataDir, "zoo.cfg"),
    ];
    await deployment.start({ name: m.name, program: ZOOKEEPER_SERVER, args, dataDir, logFile: logFile(m), ports: [m.port, m.quorumPort, m.electionPort] });
  };

  const waitFor = (names: string[], what: string, ready: (m: ZkMember) => Promise<boolean>): Promise<void> =>
    waitForMembers(names, what, (n) => ready(member(n)), { running: (n) => deployment.running(n), logFile: (n) => logFile(member(n)), timeoutMs: startTimeoutMs, stepMs: 100 });

  const member = (name: string): ZkMember => {
    const m = nodes.find((n) => n.name === name);
    if (!m) throw new Error(`no ZooKeeper member named ${name}`);
    return m;
  };

  await Promise.all(nodes.map(spawnMember));
  // Serving: a leader and followers that have joined it.
  await waitFor(nodes.map((m) => m.name), "serving", async (m) => (await zkMode(m.port)) !== null);

  return {
    nodes,
    // Answering at all is enough after a restart: serving needs a quorum, which a nemesis may be withholding.
    ...memberControls(deployment, member, spawnMember, (name) => waitFor([name], "answering", async (n) => (await fourLetterWord(n.port, "ruok")) === "imok")),
    async leader() {
      // During an election (a second or so after a partition or a kill) there is
      // none: ask again for a while. A leader cut off from its followers may still
      // say "leader" until it notices (syncLimit); the one with the newest zxid
      // (its epoch in the high bits) is the one elected last.
      const deadline = Date.now() + 3000;
      for (;;) {
        const views = await Promise.all(nodes.map(async (m) => ({ m, srvr: await fourLetterWord(m.port, "srvr") })));
        const leaders = views
          .filter((v) => /^Mode: leader/m.test(v.srvr ?? ""))
          .map((v) => ({ name: v.m.name, zxid: BigInt(v.srvr!.match(/^Zxid: (0x[0-9a-f]+)/m)?.[1] ?? "0") }))
          .sort((a, b) => (a.zxid < b.zxid ? 1 : a.zxid > b.zxid ? -1 : 0));
        if (leaders.length || Date.now() > deadline) return leaders[0]?.name ?? null;
        await sleep(100);
      }
    },
    peers: peers ? { partition: (components) => peers.partition(components), heal: () => peers.heal() } : networkPartitions(deployment, nodes.map((m) => m.name)),
  };
}
