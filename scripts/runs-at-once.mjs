#!/usr/bin/env node
// Runs started at once never draw the same port (cluster/ports.ts reserves each
// draw across every fencecheck process on the machine). This starts N runs of
// mixed backends at the same moment, each its own `fencecheck test` process and
// store, waits for their verdicts, and reads from each run.json every port its
// servers were given (client, peer, election and admin ports alike): a port in
// two runs' lists is a collision. Prints a line per run and a total; exit 0 when
// every run ended with a verdict (0, 1 or 2) and no port was drawn twice.
//
//   node scripts/runs-at-once.mjs [N] [--time-limit S]
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const args = process.argv.slice(2);
const limitAt = args.indexOf("--time-limit");
const timeLimit = limitAt >= 0 ? args.splice(limitAt, 2)[1] : "5";
const n = Number(args[0] ?? 8);
if (!Number.isInteger(n) || n < 2 || n > 32 || !(Number(timeLimit) > 0)) {
  process.stderr.write(`usage: node scripts/runs-at-once.mjs [N, 2 to 32] [--time-limit S]; got ${JSON.stringify(process.argv.slice(2))}\n`);
  process.exit(254);
}
// Backends with several servers (etcd's three members with peer ports, ZooKeeper's
// three with quorum and election ports, Redlock's five) draw the most ports at once.
const BACKENDS = [
  ["--backend", "etcd", "--nemesis", "pause"],
  ["--backend", "zookeeper", "--nemesis", "pause"],
  ["--backend", "redlock", "--client", "node-redlock", "--nemesis", "pause"],
  ["--backend", "redis", "--nemesis", "pause"],
  ["--backend", "postgres", "--nemesis", "pause"],
  ["--backend", "dynamodb", "--nemesis", "pause"],
  ["--backend", "lockserver", "--nemesis", "pause"],
  ["--backend", "etcd", "--client", "etcd3-lock", "--nemesis", "partition"],
];

const root = mkdtempSync(join(tmpdir(), "fencecheck-runs-at-once-"));
const started = Date.now();
const runs = Array.from({ length: n }, (_, i) => {
  const argv = [...BACKENDS[i % BACKENDS.length], "--time-limit", timeLimit, "--seed", String(100 + i), "--store", join(root, `run-${i}`)];
  const child = spawn(process.execPath, [join(ROOT, "dist/cli/fencecheck.js"), "test", ...argv], { stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  child.stdout.on("data", (d) => (out += d));
  child.stderr.on("data", (d) => (out += d));
  const exit = new Promise((resolve) => child.on("exit", (code, signal) => resolve(code ?? signal)));
  return { i, argv, exit, out: () => out };
});

/** Every port a run's servers were given, from its run.json. */
function serverPorts(store) {
  const run = JSON.parse(readFileSync(join(realpathSync(join(store, "latest")), "run.json"), "utf8"));
  const ports = [];
  const walk = (v, key) => {
    if (typeof v === "number" && /port/i.test(key ?? "") && !/proxy/i.test(key ?? "")) ports.push(v);
    else if (Array.isArray(v)) v.forEach((x) => walk(x, key));
    else if (v && typeof v === "object") for (const [k, x] of Object.entries(v)) walk(x, k);
  };
  walk(run.servers, "servers");
  return ports;
}

const owners = new Map();
let bad = 0;
for (const r of runs) {
  const code = await r.exit;
  const verdict = /^(VALID|INVALID|UNKNOWN)\b.*$/m.exec(r.out())?.[0] ?? `no verdict (exit ${code})`;
  let ports = [];
  try {
    ports = serverPorts(join(root, `run-${r.i}`));
  } catch (err) {
    bad++;
    process.stdout.write(`run ${r.i}: ${r.argv.slice(0, 4).join(" ")}: no run.json (${err.message})\n${r.out().slice(-400)}\n`);
    continue;
  }
  for (const p of ports) owners.set(p, [...(owners.get(p) ?? []), r.i]);
  if (![0, 1, 2].includes(code)) bad++;
  process.stdout.write(`run ${r.i}: ${r.argv.slice(0, 4).join(" ").padEnd(40)} exit ${code}  ${ports.length} server ports  ${verdict.slice(0, 100)}\n`);
}
const twice = [...owners].filter(([, rs]) => rs.length > 1);
for (const [p, rs] of twice) process.stdout.write(`port ${p} drawn by runs ${rs.join(", ")}\n`);
const total = [...owners.keys()].length;
process.stdout.write(`${n} runs at once in ${((Date.now() - started) / 1000).toFixed(1)} s: ${total} server ports, ${twice.length} drawn twice; ${n - bad} of ${n} ended with a verdict\n`);
rmSync(root, { recursive: true, force: true });
process.exit(twice.length || bad ? 1 : 0);
