// The postgres backend's options: refused with a message naming what is wrong,
// exit 254, and no run directory made.
import { describe } from "vitest";
import { refusesEach } from "../../../test/helpers.ts";

describe("test:jepsen options of the postgres backend", () => {
  const bad: Array<[string[], RegExp]> = [
    [["--backend", "postgres", "--client", "redis"], /--client redis does not work with --backend postgres; choose from postgres-lease, postgres-advisory/],
    [["--client", "postgres-lease"], /--client postgres-lease does not work with --backend redis/],
    [["--backend", "postgres", "--nemesis", "clock"], /--nemesis clock does not work with --backend postgres: the lock clients read the time with clock_timestamp\(\)/],
    [["--backend", "postgres", "--deploy", "docker", "--partition-mode", "network"], /--backend postgres has no member-to-member traffic/],
    [["--backend", "postgres", "--deploy", "external", "--pg-durable"], /--pg-durable says what the run's own Postgres keeps; with --deploy external the Postgres is yours/],
    [["--backend", "postgres", "--deploy", "external", "--pg-pooler", "pgbouncer"], /--pg-pooler starts pgbouncer in front of the run's own Postgres; with --deploy external give your pooler's address/],
    [["--pg-durable"], /--pg-durable applies to --backend postgres only, not redis/],
    [["--resource", "postgres", "--workload", "counter", "--fence-reads"], /--fence-reads is not supported with --resource postgres/],
    [["--resource", "sqlite"], /--resource: unknown value "sqlite"/],
    [["--pg-pooler", "pgbouncer"], /--pg-pooler applies to --backend postgres only, not redis/],
    [["--backend", "postgres", "--pg-pooler", "pgpool"], /--pg-pooler: unknown value "pgpool"/],
    [["--backend", "postgres", "--pg-pooler", "pgbouncer", "--nemesis", "kill"], /--nemesis kill with --pg-pooler pgbouncer: the clients reach pgbouncer-1/],
  ];
  refusesEach("test", bad);
});
