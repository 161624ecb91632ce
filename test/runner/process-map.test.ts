// A real run records which worker ran each process (run.json `processes`), and the
// check of that run names, in its stale-write witnesses, the pause that froze the
// older holder's worker. Two clients in two workers on a 500 ms lease, each hold
// working 300 ms before its write; the pause nemesis (aimed at a holder) freezes a
// holder's worker for 1.5 s: the other client takes the lock and writes, the
// frozen one thaws and writes late, accepted with fencing off.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { latestRun, processesMentioning, readNdjson, runCli, tempRunDir } from "../helpers.ts";

const RUN = [
  "--backend", "redis", "--nemesis", "pause", "--fence", "off",
  "--concurrency", "2", "--workers", "2", "--ttl", "500", "--work", "300", "--rate", "2",
  "--pause-min", "1500", "--pause-max", "1500", "--nemesis-interval", "1",
  "--time-limit", "4", "--seed", "1",
];

type Fault = { f: string; on: string; targets: string[]; workers: string[]; processes: number[]; from_index: number | null; to_index: number | null };

describe("a run's process -> worker map, and the faults its witnesses name", () => {
  it("maps every process of the history to the worker that sent its events, and a stale write's witness names the pause of its holder's worker", async () => {
    const store = tempRunDir("fc-process-map-");
    const cli = runCli("test", [...RUN, "--store", store]);
    const code = await cli.exit;
    const out = cli.stdout() + cli.stderr();
    const dir = latestRun(store);
    const info = JSON.parse(readFileSync(join(dir, "run.json"), "utf8")) as { processes: Record<string, { worker: string; client: number }> };
    const history = readNdjson(join(dir, "history.ndjson")).slice(1);
    const results = JSON.parse(readFileSync(join(dir, "results.json"), "utf8"));

    const processes = [...new Set(history.map((e) => e.process).filter((p): p is number => typeof p === "number"))].sort((a, b) => a - b);
    expect(Object.keys(info.processes).map(Number).sort((a, b) => a - b), out).toEqual(processes);
    for (const p of processes) {
      // Clients are dealt to the workers in turn, and a retired process carries on as process + concurrency.
      expect(info.processes[p]).toEqual({ worker: `worker-${(p % 2) + 1}`, client: p % 2 });
    }
    expect(results.stats.process_map).toBe(true);

    expect(code, out).toBe(1);
    const witnesses = results.anomalies["stale-write-accepted"] as Array<{ explanation: string; faults?: Fault[] }>;
    expect(witnesses.length, out).toBeGreaterThan(0);
    const pauses = witnesses.flatMap((w) => (w.faults ?? []).filter((f) => f.f === "pause").map((f) => ({ w, f })));
    expect(pauses.length, JSON.stringify(witnesses, null, 2)).toBeGreaterThan(0);
    const nemesis = new Map(history.filter((e) => e.process === "nemesis").map((e) => [e.index as number, e]));
    for (const { w, f } of pauses) {
      expect(f.on).toBe("worker");
      // The pause froze the worker the map says ran the process it names.
      for (const p of f.processes) expect(f.targets).toContain(info.processes[p].worker);
      expect(nemesis.get(f.from_index!)).toMatchObject({ f: "start-pause", value: { targets: f.targets } });
      expect(nemesis.get(f.to_index!)).toMatchObject({ f: "stop-pause", value: { targets: f.targets } });
      expect(w.explanation).toMatch(new RegExp(`While these holds lasted, .*${f.targets[0]} \\(process ${f.processes[0]}\\) was paused from [0-9.]+ ms to [0-9.]+ ms`));
    }
    expect(processesMentioning(store)).toEqual([]);
  });
});
