// The hazelcast backend's refusals: exit 254, a message naming what is wrong,
// and no run directory made.
import { describe } from "vitest";
import { refusesEach } from "../../../test/helpers.ts";

describe.concurrent("test:jepsen options of the hazelcast backend", () => {
  const bad: Array<[string[], RegExp]> = [
    [["--backend", "hazelcast", "--client", "redis"], /--client redis does not work with --backend hazelcast; choose from hazelcast/],
    [["--client", "hazelcast"], /--client hazelcast does not work with --backend redis/],
    [["--backend", "hazelcast", "--nemesis", "clock"], /--nemesis clock does not work with --backend hazelcast: Hazelcast's CP Subsystem times its sessions and Raft elections by the JVM's monotonic clock/],
    [["--backend", "hazelcast", "--lock", "semaphore:2"], /--lock semaphore:2: --client hazelcast offers mutex, reentrant, and cannot cancel a wait; on --backend hazelcast, --client hazelcast-semaphore offers it\n/],
    [["--backend", "hazelcast", "--client", "hazelcast-semaphore", "--lock", "semaphore:2"], /--client hazelcast-semaphore issues no fencing tokens.*use --fence off \(--backend hazelcast has no counters to take fences from\)/],
    [["--backend", "hazelcast", "--lock", "rw"], /--lock rw: --client hazelcast offers mutex, reentrant/],
    [["--backend", "hazelcast", "--hazelcast-cp", "bogus"], /--hazelcast-cp: unknown value "bogus"; choose from raft, unsafe/],
    [["--hazelcast-cp", "unsafe"], /--hazelcast-cp applies to --backend hazelcast only, not redis/],
  ];
  refusesEach("test", bad);
});
