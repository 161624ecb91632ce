// --backend mariadb: one MariaDB 10.11 server made for the run (or a MariaDB of
// the user's), and the MariaDB locks people use: a lease row on InnoDB, and a
// named lock (GET_LOCK) on a session of its own, or through a connection pool
// (kept on purpose: the pool hands the lock on to its next caller).
import type { Backend, BackendOption, ClientKind } from "../../core/index.ts";
import { MARIADB, MARIADB_SERVER, MARIADB_VERSION } from "./programs.ts";
import { N1, N2, N3 } from "./scenarios.ts";

const DURABLE = {
  name: "mariadb-durable",
  kind: "flag",
  default: false,
  help: "--backend mariadb: innodb_flush_log_at_trx_commit=1 (each commit fsync'ed) and the doublewrite buffer. Off (the default: 2) loses nothing to a SIGKILL of the server (the kernel holds its writes), only to a crash of the machine",
} as const satisfies BackendOption;

const CLIENTS: Record<string, ClientKind> = {
  "mariadb-lease": {
    describe: "a lease row on InnoDB: UPDATE ... WHERE free or expired (server clock), fence = LAST_INSERT_ID(fence+1) from the same UPDATE; renew and release compare the owner; freed by expiry only",
    load: async () => {
      const { MariadbLeaseLock } = await import("./lease.ts");
      return (ctx) => new MariadbLeaseLock(ctx);
    },
  },
  "mariadb-get-lock": {
    describe: "GET_LOCK on a session of its own, fence from a counter row written with the grant; freed when the session ends (wait_timeout = --ttl in whole seconds); re-entrant per session (a re-entry keeps the fence)",
    kinds: { reentrant: { fenceOnReentry: "same" } },
    load: async () => {
      const { MariadbGetLock } = await import("./get-lock.ts");
      return (ctx) => new MariadbGetLock(ctx);
    },
  },
  "mariadb-get-lock-pool": {
    describe: "GET_LOCK and RELEASE_LOCK through mysql2's connection pool, a pool per client or (--connections per-worker) per worker: the lock stays with the pooled connection, whose next caller re-enters it (N3, kept on purpose)",
    sharesConnection: true,
    load: async () => {
      const { MariadbPoolGetLock } = await import("./pool-get-lock.ts");
      return (ctx) => new MariadbPoolGetLock(ctx);
    },
  },
};

export const backend = {
  name: "mariadb",
  describe:
    "one MariaDB 10.11 server made for the run (mariadb-install-db in its run directory, innodb_flush_log_at_trx_commit=2 unless --mariadb-durable), or a MariaDB of yours (--deploy external): the lock tables in a database of the run's own, dropped at the end",
  clients: CLIENTS,
  defaultClient: "mariadb-lease",
  abilities: ["kill"],
  lacks: { clock: "the lease row compares UTC_TIMESTAMP(6) on the server, and libfaketime under mariadbd is not set up here" },
  start: async (ctx) => (await import("./start.ts")).startMariadbBackend(ctx, { durable: ctx.options[DURABLE.name] === true }),
  // A MariaDB of the user's: whom to connect as from the MYSQL_* variables, the lock tables in a database of the run's.
  external: {
    serversFrom: "MYSQL_HOST and MYSQL_TCP_PORT (localhost and 3306 when unset)",
    check: async (test) => (await import("./external.ts")).checkMariadbService(test),
    open: async (ctx) => (await import("./external.ts")).openMariadbService(ctx),
  },
  programs: [MARIADB_SERVER],
  serverNames: ["mariadb-1"],
  removeKeys: async (nodes, prefix) => (await import("./external.ts")).removeRunDatabase(nodes, prefix),
  options: [DURABLE],
  rules: [
    {
      name: "durability of a MariaDB of yours",
      check: ({ options, deploy }) => (options[DURABLE.name] && deploy === "external" ? `--mariadb-durable says what the run's own MariaDB keeps; with --deploy external the MariaDB is yours` : undefined),
    },
  ],
  needs: { servers: MARIADB },
  versions: { mariadbd: MARIADB_VERSION },
  packages: ["mysql2"],
  scenarios: [N1, N2, N3],
} as const satisfies Backend;
