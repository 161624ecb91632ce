// The mariadb backend's options: refused with a message naming what is wrong,
// exit 254, and no run directory made.
import { describe } from "vitest";
import { refusesEach } from "../../../test/helpers.ts";

describe.concurrent("test:jepsen options of the mariadb backend", () => {
  const bad: Array<[string[], RegExp]> = [
    [["--backend", "mariadb", "--client", "redis"], /--client redis does not work with --backend mariadb; choose from mariadb-lease, mariadb-get-lock, mariadb-get-lock-pool/],
    [["--client", "mariadb-get-lock"], /--client mariadb-get-lock does not work with --backend redis/],
    [["--backend", "mariadb", "--nemesis", "clock"], /--nemesis clock does not work with --backend mariadb: the lease row compares UTC_TIMESTAMP\(6\) on the server/],
    [["--backend", "mariadb", "--deploy", "external", "--mariadb-durable"], /--mariadb-durable says what the run's own MariaDB keeps; with --deploy external the MariaDB is yours/],
    [["--mariadb-durable"], /--mariadb-durable applies to --backend mariadb only, not redis/],
    [["--backend", "mariadb", "--client", "mariadb-get-lock", "--connections", "per-worker"], /--connections per-worker applies to the clients that can share one \(.*mariadb-get-lock-pool\) only, not --client mariadb-get-lock/],
    [["--backend", "mariadb", "--client", "mariadb-lease", "--lock", "reentrant"], /--lock reentrant: --client mariadb-lease offers mutex, and cannot cancel a wait/],
    [["--backend", "mariadb", "--client", "mariadb-get-lock", "--lock", "reentrant", "--cancel-rate", "0.5"], /--cancel-rate 0.5: --client mariadb-get-lock offers mutex, reentrant, and cannot cancel a wait/],
    [["--backend", "mariadb", "--deploy", "docker", "--partition-mode", "network"], /--backend mariadb has no member-to-member traffic/],
  ];
  refusesEach("test", bad);
});
