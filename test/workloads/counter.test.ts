// The counter workload through the CLI. C1 itself (a lost update with write-only
// fencing, closed by --fence-reads) is the scenario's test, test/scenarios/counter.test.ts;
// here: a holder whose fenced read is refused, and counters under random pauses.
// Two clients, TTL 2 s, a 5 s pause of client 0 and client 1 waiting from 0.3 s.
import { describe, it, expect } from "vitest";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { tempRunDir, runCli, latestRun, readNdjson, processesMentioning } from "../helpers.ts";

const twoClients = [
  "--workload", "counter", "--concurrency", "2", "--workers", "2", "--nemesis", "none",
  "--ttl", "2000", "--pause", "5000", "--stagger", "300", "--acquire-timeout", "3000",
  "--rate", "0.2", "--time-limit", "1", "--work", "0", "--seed", "42", "--fence", "on",
];

async function run(args: string[]) {
  const store = tempRunDir("fc-counter-");
  const cli = runCli("test", [...args, "--store", store]);
  const code = await cli.exit;
  const dir = latestRun(store);
  const decisions = readNdjson(join(dir, "resource.ndjson"));
  const history = readNdjson(join(dir, "history.ndjson"));
  const results = JSON.parse(readFileSync(join(dir, "results.json"), "utf8"));
  const of = (op: string, p: number) => decisions.filter((d) => d.op === op && d.process === p);
  const done = (f: string, p: number) => history.find((e) => e.process === p && e.f === f && e.type !== "invoke");
  return { code, decisions, history, results, of, done, out: cli.stdout() + cli.stderr(), store };
}

describe("counter: fenced reads", () => {
  it("--fence-reads: a holder paused before its read is refused the read and never writes", async () => {
    // Only A pauses, straight after acquiring: B acquires, reads and writes 1 in
    // the meantime; A's read with fence 1 then meets fence 2.
    const r = await run([...twoClients, "--pause-clients", "0", "--fence-reads"]);
    expect(r.code, r.out).toBe(0);
    expect(r.of("write", 1)[0]).toMatchObject({ fence: 2, data: 1, accepted: true });
    expect(r.of("read", 0)[0]).toMatchObject({ fence: 1, max_before: 2, accepted: false });
    expect(r.done("read", 0)).toMatchObject({ type: "fail", error: "stale-fence", value: { fence: 1, seen: 2 } });
    expect(r.of("write", 0)).toEqual([]);
    // The abandoned hold is still released (and finds the lock gone).
    expect(r.done("release", 0)).toMatchObject({ type: "ok", value: { released: false } });
    expect(r.results.valid).toBe(true);
  });
});

// SIGSTOPs of ~0.75-1 s against a 1 s lease, with 300 ms of work after the read:
// a frozen holder's write lands after the lease, often inside the next holder's
// read-to-write window. Over 20 s that happened 4-6 times in each of 10 runs
// (seeds 1-5, both ways), so a run without one would be a real regression (odds
// by chance well under 1%). Fenced reads must turn each into a refused write.
const random = [
  "--workload", "counter", "--concurrency", "4", "--workers", "2", "--nemesis", "pause", "--nemesis-interval", "1.5",
  "--ttl", "1000", "--work", "300", "--pause-min", "750", "--pause-max", "1000", "--time-limit", "20", "--seed", "7", "--fence", "on",
];

describe("counter under the pause nemesis", () => {
  it("write-only fencing: lost updates, and no other anomaly", async () => {
    const r = await run(random);
    expect(r.code, r.out).toBe(1);
    expect(r.results.stats.faults["start-pause"]).toBeGreaterThan(0);
    expect(r.results.stats.writes_accepted).toBeGreaterThan(3);
    expect(r.results.anomaly_types).toEqual(["lost-update"]);
  });

  it("fenced reads: valid, and the accepted writes count 1, 2, 3, ...", async () => {
    const r = await run([...random, "--fence-reads"]);
    expect(r.code, r.out).toBe(0);
    expect(r.results.stats.faults["start-pause"]).toBeGreaterThan(0);
    const written = r.decisions.filter((d) => d.op === "write" && d.accepted).map((d) => d.data);
    expect(written.length).toBeGreaterThan(3);
    expect(written).toEqual(written.map((_, i) => i + 1));
    // The pauses did make stale holders: their late writes or reads were refused.
    expect(r.decisions.some((d) => !d.accepted), r.out).toBe(true);
    expect(processesMentioning(r.store)).toEqual([]);
  });
});

describe("counter options", () => {
  for (const args of [["--pause-at", "read"], ["--fence-reads"]]) {
    it(`refuses ${args.join(" ")} for a workload that does not read`, async () => {
      const store = tempRunDir("fc-counter-opts-");
      const r = runCli("test", ["--workload", "fenced-write", ...args, "--store", join(store, "s")]);
      expect(await r.exit).toBe(254);
      expect(r.stderr()).toContain(`${args.join(" ")} needs a workload that reads the resource`);
      expect(existsSync(join(store, "s"))).toBe(false);
    });
  }
});
