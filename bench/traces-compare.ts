// npm run bench:traces-compare: the same runs judged three ways, side by side.
// Three `fencecheck test --otel` runs on Redis (valid; a stale write, fencing
// off; two holders at once, through an adapter whose release deletes any
// holder's lock), each then judged by
//   - `fencecheck check` of its history (one monotonic clock, the run's own),
//   - the trace check of the spans its collector wrote to a file (what --otel
//     prints), and
//   - the live check: `fencecheck traces --listen` behind a second real
//     Collector (otlphttp exporter), the file's spans sent to that Collector's
//     OTLP receiver as a service's SDK would send them, then SIGTERM.
// Prints one line per run: the three verdicts and their anomaly types. Needs
// `fencecheck setup --extras otelcol` (its pre-script runs it).
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { ProcessGroup } from "../cluster/processes.ts";
import { freePort } from "../cluster/ports.ts";
import { startCollector } from "../otelcol/index.ts";

const ROOT = resolve(import.meta.dirname, "..");
const CLI = join(ROOT, "dist", "cli", "fencecheck.js");

const RUNS: Array<{ name: string; args: string[] }> = [
  { name: "valid", args: ["--nemesis", "pause", "--seed", "3"] },
  { name: "stale write", args: ["--nemesis", "pause", "--fence", "off", "--seed", "3"] },
  {
    name: "mutex violation",
    args: ["--client", "./examples/broken-release-adapter.ts", "--nemesis", "pause", "--nemesis-interval", "1", "--pause-min", "1500", "--pause-max", "2500", "--seed", "3"],
  },
];

interface Judged {
  valid: boolean | "unknown";
  types: string[];
}

const word = (j: Judged): string => `${j.valid === true ? "VALID" : j.valid === false ? "INVALID" : "UNKNOWN"}${j.types.length ? ` (${[...j.types].sort().join(", ")})` : ""}`;
const judged = (results: string): Judged => {
  const r = JSON.parse(readFileSync(results, "utf8"));
  return { valid: r.valid, types: r.anomaly_types };
};
const newest = (dir: string): string => join(dir, readdirSync(dir).sort().at(-1)!);

function cli(args: string[]): { code: number; out: string } {
  const r = spawnSync(process.execPath, [CLI, ...args], { cwd: ROOT, encoding: "utf8", maxBuffer: 1 << 28 });
  return { code: r.status ?? 255, out: `${r.stdout}${r.stderr}` };
}

/** The live check of `spans`: a listener, a collector forwarding to it, each line of the file posted to the collector. */
async function live(spans: string, work: string): Promise<Judged & { spans: string }> {
  const listenPort = await freePort();
  const store = join(work, "live");
  const listener = spawn(process.execPath, [CLI, "traces", "--listen", String(listenPort), "--window", "5", "--store", store], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
  let said = "";
  listener.stdout.on("data", (d) => (said += d));
  listener.stderr.on("data", (d) => (said += d));
  const exited = new Promise<number>((done) => listener.on("exit", (c) => done(c ?? 255)));
  const group = new ProcessGroup(work);
  try {
    for (let i = 0; ; i++) {
      const up = await fetch(`http://127.0.0.1:${listenPort}/metrics`).then((r) => r.ok, () => false);
      if (up) break;
      if (i > 200) throw new Error(`the listener did not come up: ${said}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    const collector = await startCollector({ receiverPort: await freePort(), forwardTo: `http://127.0.0.1:${listenPort}`, compression: "gzip", dir: work, group });
    for (const line of readFileSync(spans, "utf8").split("\n").filter(Boolean)) {
      const r = await fetch(`${collector.url}/v1/traces`, { method: "POST", headers: { "content-type": "application/json" }, body: line });
      if (!r.ok) throw new Error(`the collector answered ${r.status}: ${await r.text()}`);
    }
    await collector.stop();
  } finally {
    await group.stopAll();
  }
  listener.kill("SIGTERM");
  await exited;
  const run = newest(join(store, `traces-live-${listenPort}`));
  const metrics = said.match(/spans? (received|accepted)[^\n]*/)?.[0] ?? "";
  return { ...judged(join(run, "results.json")), spans: metrics };
}

async function main(): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), "fc-traces-compare-"));
  const lines: string[] = [];
  const differ: string[] = [];
  try {
    for (const run of RUNS) {
      const store = join(work, run.name.replace(/ /g, "-"));
      const test = cli(["test", "--otel", "--time-limit", "10", "--concurrency", "4", ...run.args, "--store", store]);
      const runDir = test.out.match(/^Run directory: (.*)$/m)?.[1];
      const traceDir = test.out.match(/^trace check: .*\(run (.*)\)$/m)?.[1];
      if (!runDir || !traceDir) throw new Error(`${run.name}: the run or its trace check did not finish:\n${test.out}`);
      const history = cli(["check", "--out", join(work, "check-out", run.name.replace(/ /g, "-")), runDir]);
      const fromHistory = judged(join(work, "check-out", run.name.replace(/ /g, "-"), "results.json"));
      const fromFile = judged(join(traceDir, "results.json"));
      const fromLive = await live(join(runDir, "otel", "spans.json"), join(work, run.name.replace(/ /g, "-") + "-live"));
      lines.push(
        `${run.name}:`,
        `  fencecheck check (history):       ${word(fromHistory)}  exit ${history.code}`,
        `  trace check, from the file:       ${word(fromFile)}`,
        `  trace check, live via collector:  ${word(fromLive)}`,
      );
      process.stdout.write(lines.slice(-4).join("\n") + "\n");
      if (word(fromFile) !== word(fromHistory) || word(fromLive) !== word(fromHistory)) differ.push(`${run.name}: ${runDir} (trace run ${traceDir})`);
    }
  } finally {
    // Kept where the three differ, to read why.
    if (differ.length === 0) rmSync(work, { recursive: true, force: true });
    else process.stdout.write(`the verdicts differ; kept:\n  ${differ.join("\n  ")}\n`);
  }
}

await main();
