// The matrix is data checked by test:jepsen's own parser: every shipped preset
// loads, a configuration with an option or value test:jepsen refuses is refused
// naming the configuration and the option, and seeds are a pure function of the
// soak's seed, the configuration and the run.
import { readFileSync } from "node:fs";
import { describe, it, expect } from "vitest";
import { BACKENDS, CLIENTS, backendNamed } from "../../backends/index.ts";
import { BadInput } from "../../lib/index.ts";
import { faultName } from "../../soak/libraries.ts";
import { argvOf, loadPreset, parseMatrix, presetNames, runSeed, selectConfigurations, testOf } from "../../soak/index.ts";
import { sectionTable } from "../docs/markdown.ts";

const matrix = (configurations: unknown[]): string => JSON.stringify({ name: "m", configurations });
const refused = (text: string): string => {
  try {
    parseMatrix(text, "m.json", "m");
  } catch (err) {
    expect(err).toBeInstanceOf(BadInput);
    return (err as Error).message;
  }
  throw new Error("the matrix was accepted");
};

describe("matrix", () => {
  it("every shipped preset loads, and each configuration says what it expects", () => {
    // Every file in soak/presets/ is a preset, the detection matrix of issue 11 among them.
    expect(presetNames()).toEqual(["detection", "libraries", "nightly", "smoke"]);
    for (const name of presetNames().filter((n) => n !== "libraries")) {
      const m = loadPreset(name);
      expect(m.name).toBe(name);
      expect(m.configurations.length).toBeGreaterThan(1);
      // Safe and unsafe both: a preset of one kind cannot tell a checker that always says valid from one that always says invalid.
      expect(m.configurations.some((c) => c.expect.kind === "valid")).toBe(true);
      expect(m.configurations.some((c) => c.expect.kind === "find")).toBe(true);
    }
  });

  it("the libraries preset: every client under the same faults with fencing off and on (off only for a lock with no fence to take), renewing, and no claim made for any", () => {
    const m = loadPreset("libraries");
    expect(m.configurations.every((c) => c.expect.kind === "observe")).toBe(true);
    const clients = new Set(m.configurations.map((c) => c.options.client));
    expect(clients.size).toBeGreaterThanOrEqual(7);
    const clockOnServers = new Set<unknown>(), clockOnClients = new Set<unknown>();
    for (const client of clients) {
      const of = m.configurations.filter((c) => c.options.client === client);
      const faults = (fence: string) => of.filter((c) => c.options.fence === fence).map((c) => faultName(c.options, c.options.nemesis)).sort();
      // A lock that issues no fence, on a backend with no counter to take one from (Hazelcast's ISemaphore), has no fenced row to run.
      const fenceless = CLIENTS[String(client)]?.fences === false && !backendNamed(String(of[0].options.backend))?.fenceCounter;
      if (fenceless) expect(faults("on"), String(client)).toEqual([]);
      else expect(faults("off"), String(client)).toEqual(faults("on"));
      // The lease faults and kills for every client; clock jumps where a clock decides the lease.
      const clockless = faults("off").filter((f) => !f.startsWith("clock"));
      expect(clockless, String(client)).toEqual(["kill", "latency", "partition,pause", "pause"]);
      if (faults("off").includes("clock")) clockOnServers.add(client);
      if (faults("off").includes("clock (clients)")) clockOnClients.add(client);
      expect(of.every((c) => c.options.renew === "on")).toBe(true);
    }
    // The servers' clocks move only where the backend can move them (Redis, through libfaketime); every Redis lock has them.
    for (const c of m.configurations.filter((x) => x.options.nemesis === "clock" && x.options["clock-target"] !== "clients")) expect(["redis", "redlock"]).toContain(c.options.backend);
    for (const c of m.configurations.filter((x) => ["redis", "redlock"].includes(String(x.options.backend)))) expect(clockOnServers, String(c.options.client)).toContain(c.options.client);
    // Those whose library judges a lease by its own wall clock: the Redlock clients' validity, dynamodb-cas's lease end,
    // ShedLock's lock_until from the JVM's clock (and its usingDbTime() row beside it, which takes the database's).
    expect([...clockOnClients].sort()).toEqual(["dynamodb-cas", "node-redlock", "node-redlock-4", "redlock", "sesame-redlock", "shedlock-jdbc", "shedlock-jdbc-dbtime"]);
  });

  it("the detection preset: unsafe configurations with fencing off or a broken lock, safe ones with fencing on and used in 95% of runs", () => {
    const m = loadPreset("detection");
    const unsafe = m.configurations.filter((c) => c.expect.kind === "find");
    const safe = m.configurations.filter((c) => c.expect.kind === "valid");
    expect(unsafe.length).toBeGreaterThanOrEqual(20);
    for (const c of unsafe) for (const rate of Object.values((c.expect as { find: Record<string, number> }).find)) expect(rate).toBe(0.95);
    for (const c of safe) expect(c.options.fence === "on" || c.options["fence-reads"] === true, c.name).toBe(true);
    // Issue 11: in every safe configuration fencing must refuse a stale write in 95% of runs, so "valid" means fencing worked.
    for (const c of safe) expect([c.name, (c.expect as { exercised?: number }).exercised]).toEqual([c.name, 0.95]);
  });

  it("the detection preset gives each configuration its own time limit: 10 s for most, 20 or 30 s where twenty ten-second runs fell short of the bar", () => {
    const m = loadPreset("detection");
    const limits = new Map<string, number>();
    for (const c of m.configurations) {
      const limit = c.options["time-limit"];
      expect([c.name, typeof limit]).toEqual([c.name, "number"]);
      limits.set(c.name, limit as number);
    }
    const unsafe = m.configurations.filter((c) => c.expect.kind === "find").map((c) => limits.get(c.name)!);
    const safe = m.configurations.filter((c) => c.expect.kind === "valid").map((c) => limits.get(c.name)!);
    for (const l of unsafe) expect([10, 20, 30]).toContain(l);
    // Nearly all at 10 s (docs/measurements.md, "The whole preset at ten seconds"),
    // of the clients that run in fencecheck's own workers: the rest measured short of
    // their bar in twenty ten-second runs. The adapter programs' rows (Python, Go, a
    // JVM, whose start-up takes some of a short run) are held to no share here: most
    // met it at 10 s, two did not.
    const inWorkers = m.configurations.filter((c) => c.expect.kind === "find" && !CLIENTS[String(c.options.client ?? "redis")]?.program).map((c) => limits.get(c.name)!);
    expect(inWorkers.filter((l) => l === 10).length).toBeGreaterThan(inWorkers.length * 0.85);
    for (const l of safe) expect([10, 30]).toContain(l);
  });

  it("each detection row's limit is the one its twenty ten-second runs in measurements.md give it", () => {
    // The table of "The whole preset at ten seconds": a row runs 10 s where it met
    // its bar at 10 s, or where it missed and was measured again under new settings
    // (the last column says how); it keeps more where it missed or is observed.
    const measured = sectionTable(readFileSync(new URL("../../docs/measurements.md", import.meta.url), "utf8"), /The whole preset at ten seconds/);
    expect(measured?.columns).toEqual(expect.arrayContaining(["configuration", "bar at 10 s", "its limit now (s)"]));
    const table = new Map(measured!.rows.map((r) => [r.configuration, { bar: r["bar at 10 s"], now: r["its limit now (s)"] }]));
    const m = loadPreset("detection");
    expect([...table.keys()].sort()).toEqual(m.configurations.map((c) => c.name).sort());
    for (const c of m.configurations) {
      const { bar, now } = table.get(c.name)!;
      const limit = c.options["time-limit"];
      expect([c.name, Number(now.split(" ")[0])]).toEqual([c.name, limit]);
      if (bar === "met") expect([c.name, limit]).toEqual([c.name, 10]);
      else if (limit === 10) expect([c.name, now]).toEqual([c.name, expect.stringMatching(/^10 \(.+\d+\/20.*\)$/)]);
    }
  });

  it("the nightly preset covers every backend and every client", () => {
    const m = loadPreset("nightly");
    const backends = new Set(m.configurations.map((c) => c.options.backend));
    expect([...backends].sort()).toEqual(Object.keys(BACKENDS).sort());
    // GitHub's Ubuntu runners may lack postgresql-15: Postgres runs in containers there.
    for (const c of m.configurations.filter((c) => c.options.backend === "postgres")) expect(c.options.deploy, c.name).toBe("docker");
    const clients = new Set(m.configurations.map((c) => c.options.client ?? { redis: "redis", redlock: "node-redlock", etcd: "etcd-queue", zookeeper: "zookeeper" }[c.options.backend as string]));
    for (const c of ["redis", "redis-unsafe-release", "node-redlock", "node-redlock-4", "redlock", "etcd-queue", "etcd3-lock", "zookeeper", "zookeeper-naive", "dynamodb-cas", "dynamodb-rvn", "dynamodb-lock-client", "lockserver", "lockserver-majority", "postgres-lease", "postgres-advisory"]) expect(clients.has(c), c).toBe(true);
  });

  it("an unknown option is refused, naming the configuration and the option", () => {
    const msg = refused(matrix([{ name: "ok", options: { backend: "redis" }, expect: "valid" }, { name: "typo", options: { backend: "redis", nemesiss: "pause" }, expect: "valid" }]));
    expect(msg).toMatch(/configuration "typo"/);
    expect(msg).toMatch(/nemesiss/);
  });

  it("a value test:jepsen refuses is refused the same way, with test:jepsen's reason", () => {
    expect(refused(matrix([{ name: "bad-backend", options: { backend: "mysql" }, expect: "valid" }]))).toMatch(/configuration "bad-backend".*--backend: unknown value "mysql"/);
    expect(refused(matrix([{ name: "bad-nemesis", options: { nemesis: "pause,flood" }, expect: "valid" }]))).toMatch(/configuration "bad-nemesis".*"flood"/);
    // A combination only the test builder knows is wrong.
    expect(refused(matrix([{ name: "bad-client", options: { backend: "etcd", client: "redis" }, expect: "valid" }]))).toMatch(/configuration "bad-client".*--client redis does not work with --backend etcd/);
    expect(refused(matrix([{ name: "flag", options: { fence: 3 }, expect: "valid" }]))).toMatch(/configuration "flag".*--fence must be on or off/);
  });

  it("seed and store belong to the soak; expectations name known anomaly types with rates in (0, 1]", () => {
    expect(refused(matrix([{ name: "seeded", options: { seed: 4 }, expect: "valid" }]))).toMatch(/configuration "seeded".*set by the soak/);
    expect(refused(matrix([{ name: "scraped", options: { "metrics-port": 19464 }, expect: "valid" }]))).toMatch(/configuration "scraped": option "metrics-port" is set by the soak/);
    expect(refused(matrix([{ name: "e", options: {}, expect: { find: { "stale-write": 0.9 } } }]))).toMatch(/unknown anomaly type "stale-write"/);
    expect(refused(matrix([{ name: "e", options: {}, expect: { find: { "stale-write-accepted": 1.5 } } }]))).toMatch(/at most 1/);
    expect(refused(matrix([{ name: "e", options: {}, expect: "invalid" }]))).toMatch(/"expect" must be "valid", "observe", \{"valid": \{"exercised"/);
    expect(refused(matrix([{ name: "e", options: {}, expect: { valid: { exercised: 0 } } }]))).toMatch(/"exercised" must be a number above 0/);
    expect(refused(matrix([{ name: "e", options: {}, expect: { valid: { used: 0.9 } } }]))).toMatch(/"valid": unknown field "used"/);
    expect(refused(matrix([{ name: "e", options: {}, expect: "valid", extra: 1 }]))).toMatch(/unknown field "extra"/);
    expect(refused(matrix([{ name: "Bad Name", options: {}, expect: "valid" }]))).toMatch(/names a directory/);
    expect(refused(matrix([{ name: "a", options: {}, expect: "valid" }, { name: "a", options: {}, expect: "valid" }]))).toMatch(/"a" appears twice/);
    expect(refused("{not json")).toMatch(/m.json: not JSON/);
  });

  it("options become test:jepsen's arguments: on-off as on/off, flags present or not, lists joined; --time-limit overrides", () => {
    const m = parseMatrix(matrix([{ name: "c", options: { backend: "redis", fence: false, "fence-reads": true, workload: "counter", nemesis: ["pause", "partition"], "time-limit": 9 }, expect: "valid" }]), "m.json", "m");
    const c = m.configurations[0];
    expect(argvOf(c, {})).toEqual(["--backend", "redis", "--fence", "off", "--fence-reads", "--workload", "counter", "--nemesis", "pause,partition", "--time-limit", "9"]);
    expect(argvOf(c, { timeLimitS: 3, seed: 7, store: "/s" })).toEqual(["--backend", "redis", "--fence", "off", "--fence-reads", "--workload", "counter", "--nemesis", "pause,partition", "--time-limit", "3", "--seed", "7", "--store", "/s"]);
    // The soak's --metrics-port: every run serves its metrics there, one after the other.
    expect(argvOf(c, { seed: 7, metricsPort: 19464 }).slice(-4)).toEqual(["--seed", "7", "--metrics-port", "19464"]);
    expect(testOf(c, { metricsPort: 19464 }).metricsPort).toBe(19464);
  });

  it("the soak's --deploy sets every run's, over a configuration's own, through test:jepsen's parser", () => {
    const m = parseMatrix(matrix([{ name: "c", options: { backend: "etcd", deploy: "docker", "partition-mode": "network" }, expect: "valid" }]), "m.json", "m");
    const c = m.configurations[0];
    expect(argvOf(c, { deploy: "local", seed: 1 })).toEqual(["--backend", "etcd", "--partition-mode", "network", "--deploy", "local", "--seed", "1"]);
    expect(testOf(c, {}).serverOptions).toMatchObject({ deploy: "docker", memberPartitions: "network" });
    expect(() => testOf(c, { deploy: "local" })).toThrow(/configuration "c": --partition-mode network needs --deploy docker/);
    const smoke = loadPreset("smoke").configurations[0];
    expect(testOf(smoke, { deploy: "docker" }).serverOptions.deploy).toBe("docker");
  });

  it("--only selects by name and refuses a name the matrix lacks", () => {
    const m = loadPreset("smoke");
    const names = m.configurations.map((c) => c.name);
    expect(selectConfigurations(m, [names[1]]).map((c) => c.name)).toEqual([names[1]]);
    expect(() => selectConfigurations(m, ["nope"])).toThrow(/--only: .* has no configuration "nope"/);
  });

  it("a run's seed depends on the soak's seed, the configuration and the run, and on nothing else", () => {
    expect(runSeed(1, "a", 0)).toBe(runSeed(1, "a", 0));
    const seeds = new Set([runSeed(1, "a", 0), runSeed(1, "a", 1), runSeed(1, "b", 0), runSeed(2, "a", 0)]);
    expect(seeds.size).toBe(4);
    for (const s of seeds) expect(s >= 0 && s < 2 ** 31).toBe(true);
  });
});
