// Fairness of the lock clients under one load: many clients on one hot key, no
// faults, each client type run once with the same options and seed, and their
// overtakes and wait tails printed side by side (issue 5: etcd-queue serves waiters
// in turn, a SET NX retry loop does not). Each run is a whole `test:jepsen`, stored
// like any other, so its report.html shows the wait of every acquire against its
// arrival. A script that prints figures rather than a test: the runs take a while
// and the machine is shared. It exits 0 once the figures are printed.
//
// The figures are counted from each run's history with the checker's own count
// (checker/fairness.ts), once with arrivals as defined there (a waiter's place,
// from its client's queued_ms) and once taking every invoke as the arrival, to
// show how many apparent overtakes are only requests that were in flight together.
//
//   npx tsx bench/fairness.ts [--clients etcd-queue,etcd3-lock,redis] [--concurrency 50] [--time-limit 15] [--json]
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, realpathSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { BadInput, EXIT, helpText, noPositional, parseArgs, type OptionSpec } from "../lib/index.ts";
import { BACKENDS } from "../runner/index.ts";
import { CLIENTS } from "../clients/index.ts";
import { fairnessOf, loadRun, waitersOfHistory, type FairnessStats } from "../checker/index.ts";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const COMMAND = "npx tsx bench/fairness.ts";

const USAGE = [
  `usage: ${COMMAND} [options]`,
  "",
  "Runs test:jepsen once per lock client with --keys 1 --nemesis none and the same",
  "load and seed, then prints each client's overtakes (a later arrival granted",
  "before an earlier waiter) and wait tail side by side.",
  "Exit: 0 when the figures were printed, 254 bad options, 255 a run failed.",
].join("\n");

const BENCH_OPTIONS: readonly OptionSpec[] = [
  { name: "clients", kind: "list", default: ["etcd-queue", "etcd3-lock", "redis"], choices: Object.keys(CLIENTS), help: "lock clients to compare, each on its own backend" },
  { name: "concurrency", kind: "int", default: 50, min: 2, max: 1000, help: "logical clients, all on the one key" },
  { name: "time-limit", kind: "number", default: 15, min: 1, help: "seconds of operations per run" },
  { name: "work", kind: "int", default: 10, min: 0, help: "ms of work while holding" },
  // Long enough that no waiter gives up: a waiter that gives up is not counted as overtaken.
  { name: "acquire-timeout", kind: "int", default: 60_000, min: 0, help: "ms a waiter keeps trying" },
  { name: "seed", kind: "int", default: 1, min: 0, help: "the same for every run" },
  { name: "store", kind: "string", default: undefined, defaultText: "a new temporary directory", help: "run store for the runs" },
  { name: "json", kind: "flag", default: false, help: "print one JSON object instead of the table" },
];

interface Row {
  client: string;
  backend: string;
  runDir: string;
  exitCode: number;
  fairness: FairnessStats;
  /** The same count with every waiter's arrival at its invoke. */
  byInvoke: FairnessStats;
  /** What results.json says, when it differs from `fairness`. */
  resultsOvertakes: number | null;
  acquires: { ok: number; fail: number; info: number } | null;
}

function backendOf(client: string): string {
  const b = Object.values(BACKENDS).find((x) => x.clients.includes(client));
  if (!b) throw new BadInput(`--clients: no backend runs ${client}`);
  return b.name;
}

/** One test:jepsen run; resolves with its exit code and run directory. */
function run(args: string[]): Promise<{ code: number; runDir: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", join(ROOT, "cli/test-jepsen.ts"), ...args], { cwd: ROOT, stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.on("error", reject);
    child.on("exit", (code) => {
      const dir = /^Run directory: (.+)$/m.exec(out)?.[1];
      if (!dir) reject(new Error(`test:jepsen ${args.join(" ")} exited ${code} without a run directory:\n${out}`));
      else resolve({ code: code ?? EXIT.crash, runDir: dir.trim() });
    });
  });
}

const ms = (v: number | undefined): string => (v === undefined ? "n/a" : v >= 1000 ? `${(v / 1000).toFixed(2)} s` : `${v.toFixed(1)} ms`);

function table(rows: Row[]): string {
  const head = ["client", "granted", "overtakes", "per grant", "overtaken", "by invoke", "wait p50", "wait p99", "wait max", "acquires fail/info", "verdict"];
  const body = rows.map((r) => {
    const f = r.fairness;
    return [r.client, String(f.acquires_granted), String(f.overtakes), String(f.overtake_rate), String(f.overtaken), String(r.byInvoke.overtakes),
      ms(f.wait_ms?.p50), ms(f.wait_ms?.p99), ms(f.wait_ms?.max), r.acquires ? `${r.acquires.fail}/${r.acquires.info}` : "n/a",
      r.exitCode === 0 ? "valid" : `exit ${r.exitCode}`];
  });
  const notes = rows.filter((r) => r.resultsOvertakes !== null)
    .map((r) => `note: ${r.client}'s results.json counts ${r.resultsOvertakes} overtakes: its checker did not read the waiters' queued_ms`);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i].length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join("  ");
  return [line(head), ...body.map(line), "", "by invoke: the overtakes if every invoke were an arrival (requests in flight together counted as ordered)",
    ...notes, "", ...rows.map((r) => `${r.client}: ${r.runDir}`)].join("\n");
}

async function main(argv: string[]): Promise<number> {
  let o: ReturnType<typeof parseArgs>["options"];
  try {
    const parsed = parseArgs(argv, BENCH_OPTIONS);
    noPositional(parsed.positional);
    if (parsed.help) {
      console.log(helpText(USAGE, BENCH_OPTIONS));
      return EXIT.valid;
    }
    o = parsed.options;
    for (const c of o.clients as string[]) backendOf(c);
  } catch (err) {
    if (!(err instanceof BadInput)) throw err;
    console.error(`fairness: ${err.message}`);
    return EXIT.badInput;
  }
  const store = (o.store as string | undefined) ?? mkdtempSync(join(tmpdir(), "fencecheck-fairness-"));
  const common = ["--keys", "1", "--nemesis", "none", "--concurrency", String(o.concurrency), "--time-limit", String(o["time-limit"]),
    "--work", String(o.work), "--acquire-timeout", String(o["acquire-timeout"]), "--seed", String(o.seed), "--store", store];
  const rows: Row[] = [];
  for (const client of o.clients as string[]) {
    const backend = backendOf(client);
    if (!o.json) console.error(`fairness: ${client} on ${backend} ...`);
    const r = await run(["--backend", backend, "--client", client, ...common]);
    const dir = realpathSync(r.runDir);
    const results = JSON.parse(readFileSync(join(dir, "results.json"), "utf8")) as { stats: Record<string, unknown> };
    const ops = results.stats.ops as Record<string, { ok: number; fail: number; info: number }> | undefined;
    const { events } = await loadRun(dir);
    const count = (byPlace: boolean) => {
      const { waiters, keys } = waitersOfHistory(events, byPlace);
      return fairnessOf(waiters, keys).stats;
    };
    const fairness = count(true);
    const inResults = (results.stats.fairness as FairnessStats | null | undefined)?.overtakes;
    rows.push({
      client, backend, runDir: r.runDir, exitCode: r.code, fairness, byInvoke: count(false),
      resultsOvertakes: inResults === undefined || inResults === fairness.overtakes ? null : inResults, acquires: ops?.acquire ?? null,
    });
  }
  console.log(o.json ? JSON.stringify({ options: Object.fromEntries(Object.entries(o)), rows }, null, 2) : table(rows));
  return EXIT.valid;
}

main(process.argv.slice(2)).then(
  (code) => (process.exitCode = code),
  (err: unknown) => {
    console.error("fairness: the benchmark could not run:", err);
    process.exitCode = EXIT.crash;
  },
);
