// --backend lockserver: lock servers of the seed's design, fencecheck's own
// (main.ts, a Node process each): per key a holder, a lease by the server's
// monotonic clock, FIFO waiters and a fence counter, with a journal. One server
// for its own client, or five independent ones for the seed's replicated lock
// manager, which holds a lock when a majority granted it.
import type { Backend, BackendOption, ClientKind } from "../../core/index.ts";
import type { LockServerPersistence } from "./servers.ts";
import { M1, M2, M3, M4 } from "./scenarios.ts";
import { LOCK_SERVER } from "./programs.ts";

const PERSISTENCE = {
  name: "lockserver-persistence",
  kind: "string",
  default: undefined,
  defaultText: "always",
  choices: ["none", "always"],
  help: "--backend lockserver: what a killed lock server remembers: its journal of grants, renewals and releases, fsynced before each answer (always), or nothing (none: it comes back with no holders and every fence counter at 0)",
} as const satisfies BackendOption;

const MAJORITY = "lockserver-majority";

const CLIENTS: Record<string, ClientKind> = {
  lockserver: {
    describe: "our lock server of the seed's design (one server): acquire waits in its FIFO queue, lease by the server's clock, renew and release by the holder only; fence = the server's counter for the key, one per grant",
    load: async () => {
      const { LockServerLock } = await import("./client.ts");
      return (ctx) => new LockServerLock(ctx);
    },
  },
  [MAJORITY]: {
    describe:
      "the seed's replicated lock manager over five independent lock servers (no consensus): held when a majority granted within the lease; renew and release on all; fence by --fence-source: the largest of the granting servers' (max-incr, the default) or lockserver-1's counter alone (single)",
    fenceFromMajority: true,
    load: async () => {
      const { LockServerMajority } = await import("./majority.ts");
      return (ctx) => new LockServerMajority(ctx);
    },
  },
};

export const backend = {
  name: "lockserver",
  describe:
    "lock servers of the seed's design made for the run (backends/lockserver/): TCP on loopback, per key a holder, a lease, FIFO waiters and a fence counter; its journal fsynced per change unless --lockserver-persistence none. One server, or five independent ones for lockserver-majority",
  clients: CLIENTS,
  defaultClient: "lockserver",
  abilities: ["kill"],
  lacks: {
    clock: "the lock server times its leases and waits by its monotonic clock (performance.now), which libfaketime's wall-clock offset does not move: a clock fault would change nothing it decides",
  },
  cannot: {
    docker: "its servers run as local processes only: the lock server is fencecheck's own, started from this package with Node, and there is no container image of it",
    external: "its servers run as local processes only: the lock server is fencecheck's own test subject, so there is no server of yours to point a run at",
  },
  start: async (ctx) =>
    (await import("./servers.ts")).startLockServers(ctx.group, ctx.ports, {
      runDir: ctx.runDir,
      count: ctx.client === MAJORITY ? 5 : 1,
      persistence: (ctx.options[PERSISTENCE.name] as LockServerPersistence | undefined) ?? "always",
      deployment: ctx.deployment,
    }),
  programs: [LOCK_SERVER],
  // lockserver-majority's five are lockserver-1 … lockserver-5.
  serverNames: ["lockserver-1"],
  removeKeys: async () => {
    throw new Error("--backend lockserver runs its own servers only");
  },
  options: [PERSISTENCE],
  scenarios: [M1, M2, M3, M4],
} as const satisfies Backend;
