// The lock kinds' options are refused where they mean nothing or the client cannot
// give them: exit 254, a message naming the option and what the client offers,
// and no run directory made.
import { describe } from "vitest";
import { refusesEach } from "../helpers.ts";

describe("test:jepsen --lock and its options", () => {
  refusesEach("test", [
    [["--lock", "semaphore:0"], /--lock semaphore:0: a semaphore needs its permits as a whole number >= 1, e.g. --lock semaphore:2/],
    [["--lock", "semaphore"], /--lock semaphore: a semaphore needs its permits/],
    [["--lock", "semaphore:1.5"], /--lock semaphore:1.5: a semaphore needs its permits/],
    [["--lock", "barrier"], /--lock: unknown value "barrier"; choose from mutex, reentrant, rw, semaphore:N/],
    [["--lock", "rw:2"], /--lock rw:2: only a semaphore takes a number/],
    [["--lock", "rw", "--read-ratio", "2"], /--read-ratio must be at most 1/],
    [["--read-ratio", "0.3"], /--read-ratio applies to --lock rw only, not --lock mutex/],
    [["--max-depth", "4"], /--max-depth applies to --lock reentrant only, not --lock mutex/],
    [["--lock", "rw"], /--lock rw: --client redis offers mutex, and cannot cancel a wait/],
    [["--lock", "reentrant", "--backend", "etcd", "--client", "etcd-rw"], /--lock reentrant: --client etcd-rw offers mutex, rw, and cancels a wait/],
    [["--lock", "semaphore:2", "--backend", "zookeeper", "--client", "zookeeper-rw"], /--lock semaphore:2: --client zookeeper-rw offers mutex, rw, and cancels a wait/],
    [["--cancel-rate", "0.2"], /--cancel-rate 0.2: --client redis offers mutex, and cannot cancel a wait/],
    [["--cancel-rate", "1.5"], /--cancel-rate must be at most 1/],
    [["--backend", "etcd", "--client", "etcd-queue", "--cancel-rate", "0.2", "--acquire-timeout", "0"], /--cancel-rate 0.2 with --acquire-timeout 0: an acquire that does not wait has no wait to withdraw/],
    [["--lock", "rw", "--backend", "etcd", "--client", "etcd-rw", "--workload", "counter"], /--lock rw needs --workload fenced-write/],
    [["--lock", "semaphore:2", "--client", "redis-semaphore-racy", "--resource", "postgres"], /--lock semaphore needs --resource memory/],
    [["--liveness", "eventually"], /--liveness: unknown value "eventually"/],
  ]);
});
