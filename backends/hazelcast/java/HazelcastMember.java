// One Hazelcast member of a fencecheck run (--backend hazelcast): an embedded
// Hazelcast 5.4 instance, configured from its arguments, that joins the run's other
// members over TCP/IP and forms the CP Subsystem whose Raft groups hold FencedLock.
// backends/hazelcast/server.ts starts three of them as local JVMs (or in containers)
// and reads the status file this program keeps (--status) to know when the CP group
// has formed and to show what each member sees.
//
// Arguments (all required but --unsafe):
//   --name hz-1 --port 41001 --members hz-1:41001,hz-2:41002,hz-3:41003
//   --cluster NAME --cp-members 3 --group-size 3
//   --session-ttl S --heartbeat S --auto-removal S --status FILE [--unsafe] [--bind-any]
//
// Choices, each for a reason:
// - Members are named by host name (hz-1, ...), as their public address and in the
//   TCP/IP member list. Each JVM resolves those names from a hosts file of its own
//   (-Djdk.net.hosts.file, written by server.ts): its own name to 127.0.0.1, where it
//   binds, the others' to the fault proxy's links from it to them. Hazelcast keeps an
//   address's host name as given and compares addresses by it, so every member agrees
//   on who is who while each reaches the others through links of its own, and a
//   connection one member opens to another (the other answers on that same
//   connection) always crosses a link of that pair. Cutting both links of a pair cuts
//   the pair (backends/hazelcast/peers.ts).
// - --bind-any (a container, --deploy docker): no hosts file and no links; the names
//   are the run network's aliases of the containers, the member listens on every
//   interface of its container (its port is published on the host's loopback), and
//   no interface pattern is set (the network's addresses are the engine's to choose).
// - Timing is scaled down so that a run of seconds sees failures detected: member
//   heartbeats every second and a member silent for 5 s is dropped (defaults: 5 s and
//   60 s), Raft leader heartbeats every 500 ms with 4 missed before an election
//   (defaults: 5 s and 5), split-brain merges tried every 5 s (default 300 s first,
//   then 120 s), so a healed partition becomes one cluster again within a run.
// - The CP session's TTL and heartbeat come from the run's --ttl (server.ts): the
//   session is what a FencedLock's hold lives on, so a pause longer than the TTL
//   must lose it, as a lease's expiry does elsewhere.
// - A heal: without CP persistence (Enterprise only) a killed CP member never comes
//   back with its identity. Its CP seat is freed after --auto-removal seconds (Hazelcast's
//   missing-cp-member-auto-removal-seconds); a member started again in its place is a
//   new member, which this program promotes to a CP member as soon as the CP Subsystem
//   has fewer CP members than --cp-members (the promotion Hazelcast leaves to the
//   operator, promoteToCPMember()). Until then the CP groups run on the majority left.
//   A member that was cut off longer than --auto-removal is removed the same way while
//   it lives; once it can reach the others again it sees that it is no longer among
//   the CP members and starts over as a new member in the same JVM (what Hazelcast
//   asks of an operator: such a member "must be terminated"), then takes the seat.
// - --unsafe: no CP members at all (cp-member-count 0), the only CP mode of the free
//   edition from 5.5 on: FencedLock then lives in a partition of the AP data grid,
//   without Raft ("unsafe mode").
// - The partition count is 7, not 271: no map data here, and fewer partitions start
//   faster and migrate less when a member leaves. Phone-home, JMX and the health
//   monitor are off.
import com.hazelcast.config.Config;
import fencecheck.Json;
import com.hazelcast.config.JoinConfig;
import com.hazelcast.config.NetworkConfig;
import com.hazelcast.config.cp.CPSubsystemConfig;
import com.hazelcast.config.cp.RaftAlgorithmConfig;
import com.hazelcast.core.Hazelcast;
import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.cp.CPGroup;
import com.hazelcast.cp.CPMember;
import com.hazelcast.cp.CPSubsystemManagementService;
import com.hazelcast.instance.BuildInfoProvider;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

public final class HazelcastMember {
  static void log(String s) {
    System.err.println("[fencecheck-member] " + s);
    System.err.flush();
  }

  public static void main(String[] args) throws Exception {
    // One line per record, to standard error (the member's log file).
    System.setProperty("java.util.logging.SimpleFormatter.format", "%1$tT.%1$tL %4$s %3$s %5$s%6$s%n");
    Map<String, String> a = new HashMap<>();
    for (int i = 0; i < args.length; i++) {
      if (!args[i].startsWith("--")) throw new IllegalArgumentException("unexpected argument " + args[i]);
      String k = args[i].substring(2);
      if (k.equals("unsafe") || k.equals("bind-any")) a.put(k, "true");
      else if (i + 1 < args.length) a.put(k, args[++i]);
      else throw new IllegalArgumentException("--" + k + " needs a value");
    }
    String name = need(a, "name");
    int port = Integer.parseInt(need(a, "port"));
    boolean unsafe = a.containsKey("unsafe");
    int cpMembers = unsafe ? 0 : Integer.parseInt(need(a, "cp-members"));
    Path status = Path.of(need(a, "status"));

    Config c = new Config();
    c.setClusterName(need(a, "cluster"));
    c.setInstanceName(name);
    c.setProperty("hazelcast.logging.type", "jdk");
    c.setProperty("hazelcast.phone.home.enabled", "false");
    c.setProperty("hazelcast.jmx", "false");
    c.setProperty("hazelcast.health.monitoring.level", "OFF");
    c.setProperty("hazelcast.shutdownhook.enabled", "false");
    c.setProperty("hazelcast.partition.count", "7");
    boolean bindAny = a.containsKey("bind-any");
    c.setProperty("hazelcast.socket.bind.any", String.valueOf(bindAny));
    c.setProperty("hazelcast.heartbeat.interval.seconds", "1");
    c.setProperty("hazelcast.max.no.heartbeat.seconds", "5");
    c.setProperty("hazelcast.wait.seconds.before.join", "1");
    c.setProperty("hazelcast.merge.first.run.delay.seconds", "5");
    c.setProperty("hazelcast.merge.next.run.delay.seconds", "5");
    NetworkConfig n = c.getNetworkConfig();
    n.setPort(port).setPortAutoIncrement(false).setPublicAddress(name + ":" + port);
    // 127.0.0.*, not 127.0.0.1: the member list's names resolve to links on other loopback addresses, and a member that
    // matches them against its interfaces leaves out every address no interface pattern takes. It binds 127.0.0.1.
    if (!bindAny) n.getInterfaces().setEnabled(true).addInterface("127.0.0.*");
    JoinConfig j = n.getJoin();
    j.getMulticastConfig().setEnabled(false);
    j.getAutoDetectionConfig().setEnabled(false);
    j.getTcpIpConfig().setEnabled(true).setConnectionTimeoutSeconds(2);
    for (String m : need(a, "members").split(",")) j.getTcpIpConfig().addMember(m);

    CPSubsystemConfig cp = c.getCPSubsystemConfig();
    cp.setCPMemberCount(cpMembers);
    if (!unsafe) cp.setGroupSize(Integer.parseInt(need(a, "group-size")));
    // Heartbeat first: the TTL must exceed it.
    cp.setSessionHeartbeatIntervalSeconds(Integer.parseInt(need(a, "heartbeat")));
    cp.setSessionTimeToLiveSeconds(Integer.parseInt(need(a, "session-ttl")));
    cp.setMissingCPMemberAutoRemovalSeconds(Integer.parseInt(need(a, "auto-removal")));
    RaftAlgorithmConfig raft = cp.getRaftAlgorithmConfig();
    raft.setLeaderElectionTimeoutInMillis(1000);
    raft.setLeaderHeartbeatPeriodInMillis(500);
    raft.setMaxMissedLeaderHeartbeatCount(4);

    log("JVM up " + ManagementFactory.getRuntimeMXBean().getUptime() + " ms; Hazelcast " + BuildInfoProvider.getBuildInfo().getVersion() + "; " + name + " at " + name + ":" + port
        + (unsafe ? "; CP Subsystem in unsafe mode (cp-member-count 0)" : "; cp-member-count " + cpMembers + ", group-size " + cp.getGroupSize())
        + "; session TTL " + cp.getSessionTimeToLiveSeconds() + " s, heartbeat " + cp.getSessionHeartbeatIntervalSeconds() + " s, missing CP member auto-removal " + cp.getMissingCPMemberAutoRemovalSeconds() + " s");
    new HazelcastMember(c, name, cpMembers, status).watch();
  }

  static HazelcastInstance start(Config c) {
    long t0 = System.nanoTime();
    HazelcastInstance hz = Hazelcast.newHazelcastInstance(c);
    log("joined a cluster of " + hz.getCluster().getMembers().size() + " in " + (System.nanoTime() - t0) / 1_000_000 + " ms (JVM up " + ManagementFactory.getRuntimeMXBean().getUptime() + " ms)");
    return hz;
  }

  static String need(Map<String, String> a, String k) {
    String v = a.get(k);
    if (v == null) throw new IllegalArgumentException("--" + k + " is required");
    return v;
  }

  final Config config;
  HazelcastInstance hz;
  final String name;
  final int cpMembers;
  final Path status;
  boolean ready = false;
  String lastSaid = "";

  HazelcastMember(Config config, String name, int cpMembers, Path status) {
    this.config = config;
    this.hz = start(config);
    this.name = name;
    this.cpMembers = cpMembers;
    this.status = status;
  }

  /** Every 500 ms: what this member sees of the CP Subsystem, into the status file; a promotion where a CP seat is free. */
  void watch() throws Exception {
    for (;;) {
      Map<String, Object> s = new java.util.LinkedHashMap<>();
      s.put("name", name);
      s.put("uuid", hz.getCluster().getLocalMember().getUuid().toString());
      s.put("members", hz.getCluster().getMembers().size());
      s.put("jvm_up_ms", ManagementFactory.getRuntimeMXBean().getUptime());
      try {
        if (cpMembers == 0) unsafeStatus(s);
        else cpStatus(s);
      } catch (Exception e) {
        s.put("error", String.valueOf(e));
      }
      write(s);
      Thread.sleep(500);
    }
  }

  void unsafeStatus(Map<String, Object> s) throws Exception {
    s.put("unsafe", true);
    if (!ready) {
      // A CP call answered: in unsafe mode, by the partition owner of the data grid.
      hz.getCPSubsystem().getAtomicLong("fencecheck-ready").getAsync().toCompletableFuture().get(5, TimeUnit.SECONDS);
      ready = true;
      log("CP Subsystem in unsafe mode answered (no CP members, no Raft)");
    }
    s.put("ready", ready);
  }

  void cpStatus(Map<String, Object> s) throws Exception {
    CPSubsystemManagementService mgmt = hz.getCPSubsystem().getCPSubsystemManagementService();
    boolean discovered = mgmt.isDiscoveryCompleted();
    s.put("discovered", discovered);
    CPMember local = mgmt.getLocalCPMember();
    s.put("cp_member", local != null);
    if (!discovered) {
      s.put("ready", false);
      return;
    }
    Collection<CPMember> cps = mgmt.getCPMembers().toCompletableFuture().get(5, TimeUnit.SECONDS);
    List<String> seats = cps.stream().map(m -> m.getAddress().getHost() + ":" + m.getAddress().getPort()).sorted().collect(Collectors.toList());
    s.put("cp_members", seats);
    if (local != null && cps.stream().noneMatch(m -> m.getUuid().equals(local.getUuid()))) {
      // Removed from the CP Subsystem while it was cut off longer than the
      // auto-removal time: Hazelcast lets no removed CP member back ("must be
      // terminated"), and its Raft nodes would call elections for ever. So it starts
      // over as a new member, with a new identity, in the same JVM, and takes a free
      // seat as a killed member's restart does (below).
      log(name + " was removed from the CP Subsystem (CP members now " + seats + "): starting over as a new member");
      hz.getLifecycleService().terminate();
      hz = start(config);
      ready = false;
      lastSaid = "";
      s.put("ready", false);
      return;
    }
    if (local == null && cps.size() < cpMembers) {
      // The heal: a seat freed by the auto-removal of a member that is gone.
      log("promoting " + name + " to CP member: the CP Subsystem has " + cps.size() + " of " + cpMembers + " (" + seats + ")");
      try {
        mgmt.promoteToCPMember().toCompletableFuture().get(10, TimeUnit.SECONDS);
        log("promoted " + name + " to CP member");
      } catch (Exception e) {
        log("promotion failed (tried again in 500 ms): " + e);
      }
    }
    if (!ready && local != null) {
      // The DEFAULT group, where FencedLock's keys live, is made at its first use; a
      // call that it answers means its Raft group has formed and elected a leader.
      hz.getCPSubsystem().getAtomicLong("fencecheck-ready").getAsync().toCompletableFuture().get(5, TimeUnit.SECONDS);
      ready = true;
    }
    List<String> groups = new ArrayList<>();
    for (var id : mgmt.getCPGroupIds().toCompletableFuture().get(5, TimeUnit.SECONDS)) {
      CPGroup g = mgmt.getCPGroup(id.getName()).toCompletableFuture().get(5, TimeUnit.SECONDS);
      if (g != null)
        groups.add(id.getName() + " " + g.status() + " [" + g.members().stream().map(m -> m.getAddress().getHost()).sorted().collect(Collectors.joining(",")) + "]");
    }
    s.put("cp_groups", groups);
    s.put("leader", leaderOfDefault(mgmt, cps));
    s.put("ready", ready);
    String said = "CP members " + seats + "; groups " + groups + (local == null ? "; this member is not a CP member" : "");
    if (!said.equals(lastSaid)) {
      log((ready && lastSaid.isEmpty() ? "CP Subsystem ready: " : "") + said);
      lastSaid = said;
    }
  }

  /**
   * The member that leads the DEFAULT group (FencedLock's) as this member's Raft node
   * sees it, or null. Hazelcast has no public call for it: its RaftService's node of
   * the group is asked (internal API of 5.4; null if that ever fails).
   */
  String leaderOfDefault(CPSubsystemManagementService mgmt, Collection<CPMember> cps) {
    try {
      CPGroup g = mgmt.getCPGroup(CPGroup.DEFAULT_GROUP_NAME).toCompletableFuture().get(5, TimeUnit.SECONDS);
      if (g == null) return null;
      com.hazelcast.cp.internal.RaftService raft = ((com.hazelcast.instance.impl.HazelcastInstanceProxy) hz).getOriginal().node.getNodeEngine().getService(com.hazelcast.cp.internal.RaftService.SERVICE_NAME);
      var node = raft.getRaftNode(g.id());
      var leader = node == null ? null : node.getLeader();
      if (leader == null) return null;
      for (CPMember m : cps) if (m.getUuid().equals(leader.getUuid())) return m.getAddress().getHost();
      return null;
    } catch (Exception e) {
      return null;
    }
  }

  /** The status file, replaced whole (written aside and renamed). */
  void write(Map<String, Object> s) throws IOException {
    Path tmp = status.resolveSibling(status.getFileName() + ".tmp");
    Files.writeString(tmp, Json.write(s) + "\n", StandardCharsets.UTF_8);
    Files.move(tmp, status, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
  }
}
