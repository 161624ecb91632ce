// --backend hazelcast: three Hazelcast 5.4.0 members (local JVMs or containers, all
// three CP members) whose traffic to each other passes the fault proxy (or, in
// containers, the run's network), and Hazelcast's FencedLock (and ISemaphore) on
// their CP Subsystem's Raft groups through its Java client, a program of this
// folder (java/). 5.4.0 is the last free edition with the CP
// Subsystem (5.5 made it Enterprise only, hz-docs#1710).
import { shippedProgram } from "../../clients/index.ts";
import type { Backend, BackendOption, ClientKind } from "../../core/index.ts";
import { HAZELCAST, HAZELCAST_MANIFEST, HAZELCAST_MEMBER, HAZELCAST_SEMAPHORE_MANIFEST, HAZELCAST_VERSION } from "./programs.ts";

const CP = {
  name: "hazelcast-cp",
  kind: "string",
  default: undefined,
  defaultText: "raft",
  choices: ["raft", "unsafe"],
  help:
    "--backend hazelcast: raft, three CP members whose Raft groups hold FencedLock; or unsafe, no CP members (cp-member-count 0), FencedLock in the CP Subsystem's unsafe mode, kept in a partition of the AP data grid without Raft. (Hazelcast 5.5's free edition has neither: it refuses CP members and throws at getLock even in unsafe mode)",
} as const satisfies BackendOption;

const CLIENTS: Record<string, ClientKind> = {
  // Hazelcast's lock is used from Java, as its users use it: an adapter program (docs/adapter-protocol.md).
  hazelcast: { ...shippedProgram(HAZELCAST_MANIFEST), needs: HAZELCAST },
  // ISemaphore, the same program: a client of its own because a semaphore's holds have no fence ("fences": false), a FencedLock's do.
  "hazelcast-semaphore": { ...shippedProgram(HAZELCAST_SEMAPHORE_MANIFEST), needs: HAZELCAST },
};

export const backend = {
  name: "hazelcast",
  describe:
    "three Hazelcast 5.4.0 members (local JVMs, all CP members: one CP group of three) whose member-to-member traffic passes the fault proxy, one link per pair (--deploy docker: containers meeting over the run's network); CP session TTL = --ttl in whole seconds (at least 2), heartbeat 1 s, a missing CP member removed after max(5 s, TTL) and its restarted self promoted into its seat",
  clients: CLIENTS,
  defaultClient: "hazelcast",
  abilities: ["kill"],
  lacks: {
    clock: "Hazelcast's CP Subsystem times its sessions and Raft elections by the JVM's monotonic clock (System.nanoTime), which libfaketime and a wall-clock jump do not move: a clock fault would change nothing it decides",
  },
  members: true,
  cannot: {
    external:
      "a run sets its members' CP Subsystem from its own options (the CP session TTL from --ttl, the member counts, the auto-removal of missing CP members), which a cluster of yours has set otherwise",
  },
  start: async (ctx) =>
    (await import("./server.ts")).startHzCluster({
      group: ctx.group,
      ports: ctx.ports,
      runDir: ctx.runDir,
      toxiproxyUrl: await ctx.toxiproxyUrl(),
      deployment: ctx.deployment,
      ttlMs: ctx.ttlMs ?? 1000,
      unsafe: ctx.options[CP.name] === "unsafe",
    }),
  programs: [HAZELCAST_MEMBER],
  serverNames: ["hz-1", "hz-2", "hz-3"],
  removeKeys: async () => {
    throw new Error("--backend hazelcast runs its own members only");
  },
  options: [CP],
  needs: { servers: HAZELCAST },
  versions: { hazelcast: HAZELCAST_VERSION },
} as const satisfies Backend;
