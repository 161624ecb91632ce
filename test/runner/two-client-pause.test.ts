// The seed's experiment (K1), deterministic: TTL 2 s; client A acquires, pauses
// 5 s (a GC pause) before writing; client B acquires once A's lease has expired
// and writes. Without fencing both writes take effect and the checker finds the
// stale one; with fencing A's write gets a 409 and the run is valid.
import { describe, it, expect } from "vitest";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { tempRunDir, runCli, latestRun, readNdjson, processesMentioning } from "../helpers.ts";

const experiment = [
  "--concurrency", "2", "--workers", "2", "--nemesis", "none",
  "--ttl", "2000", "--pause", "5000", "--pause-clients", "0",
  "--stagger", "300", "--acquire-timeout", "3000", "--rate", "0.2",
  "--time-limit", "1", "--work", "0", "--seed", "42",
];

async function run(fence: "on" | "off") {
  const store = tempRunDir("fc-k1-");
  const cli = runCli("test", [...experiment, "--fence", fence, "--store", store]);
  const code = await cli.exit;
  const dir = latestRun(store);
  const decisions = readNdjson(join(dir, "resource.ndjson"));
  const history = readNdjson(join(dir, "history.ndjson")).slice(1);
  const results = JSON.parse(readFileSync(join(dir, "results.json"), "utf8"));
  // A is client 0 (process 0): its only hold has fence 1. B is process 1.
  const writesOf = (p: number) => decisions.filter((d) => d.op === "write" && d.process === p);
  return { code, decisions, history, results, a: writesOf(0), b: writesOf(1), out: cli.stdout() + cli.stderr(), store };
}

describe("two clients, a 5 s pause against a 2 s lease (K1)", () => {
  it("without fencing: two accepted writers and stale-write-accepted", async () => {
    const r = await run("off");
    expect(r.code, r.out).toBe(1);
    expect(r.b.length).toBeGreaterThan(0);
    expect(r.b[0]).toMatchObject({ accepted: true, fence: 2 });
    expect(r.a).toHaveLength(1);
    expect(r.a[0]).toMatchObject({ accepted: true, fence: 1 });
    expect(r.a[0].max_before as number).toBeGreaterThanOrEqual(2);
    // A's write came after B's, in the resource's order.
    expect(r.a[0].seq as number).toBeGreaterThan(r.b[0].seq as number);
    expect(r.results.valid).toBe(false);
    expect(r.results.anomaly_types).toContain("stale-write-accepted");
    const witness = r.results.anomalies["stale-write-accepted"][0];
    expect(witness.seqs).toContain(r.a[0].seq);
    expect(processesMentioning(r.store)).toEqual([]);
  });

  it("with fencing: A's write is refused with 409 and the run is valid", async () => {
    const r = await run("on");
    expect(r.code, r.out).toBe(0);
    expect(r.b[0]).toMatchObject({ accepted: true, fence: 2 });
    expect(r.a).toHaveLength(1);
    expect(r.a[0]).toMatchObject({ accepted: false, fence: 1 });
    const aWrite = r.history.find((e) => e.process === 0 && e.f === "write" && e.type !== "invoke");
    expect(aWrite).toMatchObject({ type: "fail", error: "stale-fence" });
    expect(r.results.valid).toBe(true);
    expect(r.results.stats.stale_writes_refused).toBeGreaterThanOrEqual(1);
  });
});
