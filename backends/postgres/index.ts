// --backend postgres: one Postgres 15 server made for the run (or a Postgres of
// the user's), and the Postgres locks people use: a lease row, and a session
// advisory lock (pg_advisory_lock), each on a session of its own, optionally
// behind pgbouncer in transaction pooling. Its server is also a store the
// protected resource can decide in (--resource postgres).
import type { Backend, BackendContext, BackendOption, ClientKind } from "../../core/index.ts";
import { shippedProgram } from "../../clients/index.ts";
import { PGBOUNCER, PGBOUNCER_SERVER, POSTGRES, POSTGRES_SERVER, POSTGRES_VERSION, SHEDLOCK } from "./programs.ts";
import { P1 } from "./scenarios.ts";

const DURABLE = {
  name: "pg-durable",
  kind: "flag",
  default: false,
  help: "--backend postgres: fsync on. Off (the default) loses nothing to a SIGKILL of the server (the kernel holds its writes), only to a crash of the machine",
} as const satisfies BackendOption;

const POOLER = {
  name: "pg-pooler",
  kind: "string",
  default: "none",
  choices: ["none", "pgbouncer"],
  help: "--backend postgres: clients reach the server directly (through their proxies), or through pgbouncer in transaction pooling with one server connection (P1: session advisory locks break)",
} as const satisfies BackendOption;

/** A counter row per key (fencecheck_fences) incremented after each grant, for a lock that issues no fence (pg loaded only then). */
const postgresFenceCounter = async () => (await import("./counter-fenced.ts")).postgresFenceCounter();

const pooled = (o: BackendContext["options"]): boolean => o[POOLER.name] === "pgbouncer";

const CLIENTS: Record<string, ClientKind> = {
  "postgres-lease": {
    describe: "a lease row: UPDATE ... WHERE expired (server clock) RETURNING fence+1; renew and release compare the owner; freed by expiry only",
    load: async () => {
      const { PostgresLeaseLock } = await import("./lease.ts");
      return (ctx) => new PostgresLeaseLock(ctx);
    },
  },
  "postgres-advisory": {
    describe: "pg_advisory_lock on a session of its own, fence from a counter row written with the grant; freed when the session ends (idle_session_timeout = --ttl while holding)",
    kinds: { rw: true, cancel: true },
    load: async () => {
      const { PostgresAdvisoryLock } = await import("./advisory.ts");
      return (ctx) => new PostgresAdvisoryLock(ctx);
    },
  },
  // ShedLock 7.10.1 from Maven Central (Java): JdbcTemplateLockProvider on the table shedlock, lock_until by
  // the JVM's clock; no fence, so fences from the counter row (--fence-source single).
  "shedlock-jdbc": { ...shippedProgram("adapters/java/shedlock/shedlock-jdbc.adapter.json", postgresFenceCounter), needs: SHEDLOCK },
  // The same with usingDbTime(): the server's clock decides.
  "shedlock-jdbc-dbtime": { ...shippedProgram("adapters/java/shedlock/shedlock-jdbc-dbtime.adapter.json", postgresFenceCounter), needs: SHEDLOCK },
};

export const backend = {
  name: "postgres",
  describe:
    "one Postgres 15 server made for the run (initdb in its run directory, fsync off unless --pg-durable), or a Postgres of yours (--deploy external): the lock tables in a schema of the run's own, dropped at the end",
  clients: CLIENTS,
  defaultClient: "postgres-lease",
  abilities: ["kill"],
  lacks: { clock: "the lock clients read the time with clock_timestamp(), and libfaketime under Postgres is not set up here" },
  start: async (ctx) => (await import("./start.ts")).startPostgresBackend(ctx, { durable: ctx.options[DURABLE.name] === true, pooled: pooled(ctx.options) }),
  // A Postgres of the user's: whom to connect as from the PG* variables, the lock tables in a schema of the run's.
  external: {
    serversFrom: "PGHOST and PGPORT (localhost and 5432 when unset)",
    check: async (test) => (await import("./external.ts")).checkPostgresService(test),
    open: async (ctx) => (await import("./external.ts")).openPostgresService(ctx),
  },
  programs: [POSTGRES_SERVER, PGBOUNCER_SERVER],
  serverNames: ["postgres-1"],
  removeKeys: async (nodes, prefix) => (await import("./external.ts")).removeRunSchema(nodes, prefix),
  options: [DURABLE, POOLER],
  rules: [
    {
      name: "faults at the server behind the pooler",
      check: ({ options, nemeses }) => {
        const atServer = nemeses.filter((n) => n === "kill" || n === "pause-server");
        if (options[POOLER.name] === "pgbouncer" && atServer.length)
          return `--nemesis ${atServer.join(",")} with --pg-pooler pgbouncer: the clients reach pgbouncer-1, and these faults aim at the server they reach; drop one or the other`;
      },
    },
    {
      name: "durability of a Postgres of yours",
      check: ({ options, deploy }) => (options[DURABLE.name] && deploy === "external" ? `--pg-durable says what the run's own Postgres keeps; with --deploy external the Postgres is yours` : undefined),
    },
    {
      name: "a pooler in front of a Postgres of yours",
      check: ({ options, deploy }) =>
        options[POOLER.name] === "pgbouncer" && deploy === "external"
          ? `--pg-pooler starts pgbouncer in front of the run's own Postgres; with --deploy external give your pooler's address as --endpoints (or PGHOST and PGPORT)`
          : undefined,
    },
  ],
  needs: { servers: POSTGRES, options: [{ requirement: PGBOUNCER, when: pooled }] },
  versions: { postgres: POSTGRES_VERSION },
  packages: ["pg"],
  fenceCounter: postgresFenceCounter,
  // A Postgres of the resource's own (not the lock service's, which the nemeses fault), where it keeps each key's value and fence.
  resourceStore: {
    describe: "a Postgres of its own (one conditional UPDATE ... WHERE fence < $1 per write)",
    start: async ({ group, ports, runDir }) => {
      const node = await (await import("./start.ts")).startResourceDb(group, ports, runDir);
      return { node, config: { host: node.host, port: node.port } };
    },
    decider: "backends/postgres/decider",
    needs: POSTGRES,
  },
  scenarios: [P1],
} as const satisfies Backend;
