// Bad options are refused with a message naming the option, exit 254, and no run
// directory is made; --help lists every option with its default.
import { describe, it, expect } from "vitest";
import { runCli, refusesEach } from "../helpers.ts";
import { TEST_OPTIONS } from "../../runner/options.ts";

describe("test:jepsen options", () => {
  it("--help lists every option", async () => {
    const r = runCli("test", ["--help"]);
    expect(await r.exit).toBe(0);
    for (const o of TEST_OPTIONS) expect(r.stdout()).toContain(`--${o.name}`);
    expect(r.stdout()).toContain("(default: redis)");
  });

  const bad: Array<[string[], RegExp]> = [
    [["--backend", "consul"], /--backend: unknown value "consul"/],
    [["--fence", "maybe"], /--fence must be on or off/],
    [["--time-limit", "-3"], /--time-limit must be at least 1/],
    [["--concurrency", "2.5"], /--concurrency must be an integer/],
    [["--nemesis", "pause,meteor"], /--nemesis: unknown value "meteor"/],
    [["--nemesis", "none,pause"], /--nemesis none cannot be combined/],
    [["--frobnicate", "1"], /unknown option --frobnicate/],
    [["--ttl"], /--ttl needs a value/],
    [["--pause-min", "900", "--pause-max", "100"], /--pause-min \(900\) must not exceed --pause-max \(100\)/],
    [["--pause-clients", "7"], /--pause-clients: "7" is not a client id/],
    [["--client", "nope"], /--client: unknown value "nope"/],
    [["stray"], /unexpected argument "stray"/],
    [["--connections", "per-worker"], /--connections per-worker applies to the clients that can share one \(etcd-queue, etcd-queue-cancel-delete, etcd-rw, etcd-rw-writer-naive, etcd3-lock[^)]*\) only, not --client redis/],
    [["--backend", "etcd", "--connections", "shared"], /--connections: unknown value "shared"/],
    [["--backend", "zookeeper", "--nemesis", "clock"], /--nemesis clock does not work with --backend zookeeper: ZooKeeper expires sessions by the JVM's monotonic clock/],
    [["--nemesis", "clock", "--clock-target", "workers"], /--clock-target: unknown value "workers"; choose from servers, clients/],
    [["--clock-target", "clients"], /--clock-target clients says whose clocks --nemesis clock moves, and this run has no clock nemesis \(--nemesis pause\)/],
    [["--backend", "dynamodb", "--deploy", "docker"], /--deploy docker does not work with --backend dynamodb/],
    [["--backend", "zookeeper", "--client", "etcd-queue"], /--client etcd-queue does not work with --backend zookeeper; choose from zookeeper, zookeeper-naive/],
    [["--backend", "etcd", "--client", "zookeeper"], /--client zookeeper does not work with --backend etcd/],
    [["--backend", "zookeeper", "--partition-mode", "network"], /--partition-mode network needs --deploy docker/],
  ];
  refusesEach("test", bad);
});
