// The same runs through our fault proxy and through Toxiproxy (--toxiproxy
// auto), side by side: each backend under each nemesis, fencing off and on, with
// the same seed, so that a verdict or an anomaly count that differs between the
// two proxies points at a difference in the proxies, not in the draw. A script
// that prints a table rather than a test (it runs the built bin, as a user's
// `fencecheck test` does): runs are short and machines shared,
// and counts wobble from run to run even on one proxy; a person reads the table.
//
//   npm run bench:proxy-verdicts -- [--backends LIST] [--nemeses LIST] [--time-limit S] [--seed N]
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, readdirSync, realpathSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BadInput, EXIT, repoFile, helpText, noPositional, parseArgs, type OptionSpec } from "../lib/index.ts";

const OPTIONS: readonly OptionSpec[] = [
  { name: "backends", kind: "list", default: ["redis", "redlock", "etcd"], help: "backends to run" },
  { name: "nemeses", kind: "list", default: ["partition", "latency"], help: "nemeses, one run each" },
  { name: "time-limit", kind: "number", default: 10, min: 1, help: "seconds of operations per run" },
  { name: "seed", kind: "int", default: 1, min: 0, help: "the seed of every run" },
];
const USAGE = "usage: npm run bench:proxy-verdicts -- [--backends LIST] [--nemeses LIST] [--time-limit S] [--seed N]\n\nRuns each backend under each nemesis, fencing off and on, through our fault proxy and through\nToxiproxy (--toxiproxy auto), with one seed, and prints their verdicts and anomalies side by side.";

const PROXIES = [
  { name: "ours", args: [] as string[] },
  { name: "toxiproxy", args: ["--toxiproxy", "auto"] },
];

interface Outcome {
  exit: number | null;
  /** valid, invalid, unknown, or what stopped the run. */
  verdict: string;
  anomalies: Record<string, number>;
  faults: number;
  seconds: number;
  note?: string;
}

function runOnce(args: string[], store: string): Promise<Outcome> {
  const started = performance.now();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [repoFile("dist/cli/fencecheck.js"), "test", ...args, "--store", store], { stdio: ["ignore", "ignore", "pipe"] });
    let err = "";
    child.stderr.on("data", (d: Buffer) => (err += d.toString()));
    child.on("exit", (exit) => {
      const seconds = (performance.now() - started) / 1000;
      const dirs = readdirSync(store).filter((d) => d !== "latest" && !d.startsWith("."));
      const runDir = dirs.length ? realpathSync(join(store, "latest")) : null;
      if (!runDir || !existsSync(join(runDir, "results.json"))) {
        const last = err.trim().split("\n").filter((l) => l.startsWith("fencecheck")).pop() ?? err.trim().split("\n").pop() ?? "";
        return resolve({ exit, verdict: exit === EXIT.badInput ? "refused" : `exit ${exit}`, anomalies: {}, faults: 0, seconds, note: last.slice(0, 160) });
      }
      const results = JSON.parse(readFileSync(join(runDir, "results.json"), "utf8")) as { valid: boolean | "unknown"; anomalies: Record<string, unknown[]> };
      const history = readFileSync(join(runDir, "history.ndjson"), "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l) as { process: unknown; f: string });
      const anomalies = Object.fromEntries(Object.entries(results.anomalies).map(([k, v]) => [k, Array.isArray(v) ? v.length : 1]).filter(([, n]) => (n as number) > 0));
      resolve({
        exit,
        verdict: results.valid === true ? "valid" : results.valid === false ? "INVALID" : "unknown",
        anomalies,
        faults: history.filter((e) => e.process === "nemesis" && e.f.startsWith("start-")).length,
        seconds,
      });
    });
  });
}

const describeAnomalies = (a: Record<string, number>): string => Object.entries(a).map(([k, n]) => `${k} ${n}`).join(", ") || "-";

async function main(): Promise<number> {
  let o;
  try {
    const parsed = parseArgs(process.argv.slice(2), OPTIONS);
    noPositional(parsed.positional);
    if (parsed.help) return (process.stdout.write(helpText(USAGE, OPTIONS)), EXIT.valid);
    o = parsed.options;
  } catch (e) {
    if (!(e instanceof BadInput)) throw e;
    process.stderr.write(`${e.message}\n`);
    return EXIT.badInput;
  }
  const root = mkdtempSync(join(tmpdir(), "fencecheck-proxy-verdicts-"));
  const rows: string[][] = [];
  const header = ["backend", "nemesis", "fence", ...PROXIES.flatMap((p) => [`${p.name}: verdict`, "faults", "anomalies"])];
  for (const backend of o.backends as string[])
    for (const nemesis of o.nemeses as string[])
      for (const fence of ["off", "on"]) {
        const common = ["--backend", backend, "--nemesis", nemesis, "--fence", fence, "--time-limit", String(o["time-limit"]), "--seed", String(o.seed)];
        const cells: string[] = [backend, nemesis, fence];
        for (const p of PROXIES) {
          const store = mkdtempSync(join(root, `${backend}-${nemesis}-${fence}-${p.name}-`));
          const r = await runOnce([...common, ...p.args], store);
          process.stderr.write(`${[backend, nemesis, `fence ${fence}`, p.name].join(" ")}: ${r.verdict} in ${r.seconds.toFixed(0)} s, ${r.faults} faults, ${describeAnomalies(r.anomalies)}${r.note ? ` (${r.note})` : ""}\n`);
          cells.push(r.verdict, String(r.faults), r.note && r.verdict === "refused" ? "(254 at set-up)" : describeAnomalies(r.anomalies));
        }
        rows.push(cells);
      }
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]): string => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(" | ")} |`;
  process.stdout.write(
    [`same seed (${o.seed}), --time-limit ${o["time-limit"]}; runs in ${root}`, "", line(header), line(widths.map((w) => "-".repeat(w))), ...rows.map(line)].join("\n") + "\n",
  );
  return EXIT.valid;
}

process.exitCode = await main();
