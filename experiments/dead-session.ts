// dead-session: how long a session advisory lock outlives its holder. A holder
// (a small node process of its own with one connection straight to the server,
// no proxy) takes pg_advisory_lock; then it is killed (SIGKILL: its kernel
// closes the socket), frozen (SIGSTOP: its kernel still answers for the
// socket), or cut off (every packet between it and the server dropped by two
// iptables rules that name its connection's ports, as a dead host or a broken
// network would); a waiter on this side, already queued, records when it is
// granted. Each fate runs against servers that notice a silent peer differently:
// Postgres' defaults (keepalives after the kernel's 2 hours), TCP keepalives of
// a second or so, and idle_session_timeout.
import { SERVER_NEEDS } from "../backends/index.ts";
import { spawn, execFileSync, type ChildProcess } from "node:child_process";
import { chmodSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";
import { ProcessGroup } from "../cluster/processes.ts";
import { PortPlan } from "../cluster/ports.ts";
import { pgConnection, startPostgresCluster } from "../backends/postgres/server.ts";
import { BadInput, ROOT, sleep, type OptionSpec } from "../lib/index.ts";
import type { Experiment, ExperimentContext, Findings } from "./experiment.ts";

const FATES = ["killed", "frozen", "cut off"] as const;
type Fate = (typeof FATES)[number];

const SETTINGS: Record<string, Record<string, string>> = {
  defaults: {},
  keepalives: { tcp_keepalives_idle: "1", tcp_keepalives_interval: "1", tcp_keepalives_count: "3" },
  "idle-session-timeout": { idle_session_timeout: "2s" },
};

const OPTIONS: readonly OptionSpec[] = [
  { name: "settings", kind: "list", default: Object.keys(SETTINGS), choices: Object.keys(SETTINGS), help: "server settings to compare: Postgres' defaults, tcp_keepalives_idle=1 interval=1 count=3, idle_session_timeout=2s" },
  { name: "fates", kind: "list", default: [...FATES], choices: FATES, help: "what happens to the holder: killed (SIGKILL), frozen (SIGSTOP), cut off (its packets dropped)" },
  { name: "limit", kind: "int", default: 20_000, min: 1000, help: "ms the waiter waits before the lock counts as never released" },
];

/** The holder: one connection, the lock, its local port on stdout, then nothing. */
const HOLDER = `
import pg from "pg";
const c = new pg.Client(JSON.parse(process.argv[1]));
c.on("error", () => {});
await c.connect();
await c.query("SELECT pg_advisory_lock(1, 1)");
process.stdout.write(JSON.stringify({ port: c.connection.stream.localPort }) + "\\n");
setInterval(() => {}, 1 << 30);
`;

function startHolder(conn: object): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(process.execPath, ["--input-type=module", "-e", HOLDER, JSON.stringify(conn)], { cwd: ROOT, stdio: ["ignore", "pipe", "inherit"] });
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.once("exit", (code) => reject(new Error(`the holder exited (${code}) before it held the lock`)));
    child.stdout!.once("data", (d) => resolve({ child, port: (JSON.parse(String(d)) as { port: number }).port }));
  });
}

/** Two rules that drop what the holder's connection sends and receives; the function that removes them. */
function cutOff(holderPort: number, serverPort: number): () => void {
  const rules = [
    ["-p", "tcp", "-s", "127.0.0.1", "--sport", String(holderPort), "--dport", String(serverPort), "-j", "DROP"],
    ["-p", "tcp", "-s", "127.0.0.1", "--sport", String(serverPort), "--dport", String(holderPort), "-j", "DROP"],
  ];
  const added: string[][] = [];
  const remove = () => {
    for (const r of added.splice(0)) execFileSync("iptables", ["-D", "INPUT", ...r], { stdio: "ignore" });
  };
  try {
    for (const r of rules) {
      execFileSync("iptables", ["-I", "INPUT", ...r], { stdio: "pipe" });
      added.push(r);
    }
  } catch (e) {
    remove();
    throw new Error(`cannot cut the holder off with iptables (root and iptables are needed): ${(e as Error).message}`);
  }
  return remove;
}

interface Trial {
  settings: string;
  fate: Fate;
  /** ms from the fault to the waiter's grant; null: not within the limit. */
  released_ms: number | null;
  limit_ms: number;
}

async function trial(group: ProcessGroup, node: { host: string; port: number }, settings: string, fate: Fate, limitMs: number): Promise<Trial> {
  const holder = await startHolder(pgConnection(node));
  // The reaper's too, and the rules go at teardown: an interrupted experiment leaves neither behind.
  group.watch(holder.child.pid!);
  const waiter = new pg.Client({ ...pgConnection(node), query_timeout: limitMs + 5000 });
  waiter.on("error", () => {});
  let heal = () => {};
  try {
    await waiter.connect();
    await waiter.query(`SET lock_timeout = ${limitMs}`);
    const granted = waiter.query("SELECT pg_advisory_lock(1, 1)").then(() => true, () => false);
    // The waiter is queued before the fault.
    await sleep(200);
    const t0 = performance.now();
    if (fate === "killed") holder.child.kill("SIGKILL");
    else if (fate === "frozen") holder.child.kill("SIGSTOP");
    else {
      heal = cutOff(holder.port, node.port);
      group.onStop(async () => heal());
    }
    const ok = await granted;
    return { settings, fate, released_ms: ok ? Math.round(performance.now() - t0) : null, limit_ms: limitMs };
  } finally {
    heal();
    heal = () => {};
    holder.child.kill("SIGKILL");
    group.unwatch(holder.child.pid!);
    await waiter.end().catch(() => {});
  }
}

const shown = (t: Trial): string => (t.released_ms === null ? `never (> ${t.limit_ms / 1000} s)` : `${(t.released_ms / 1000).toFixed(2)} s`);
const sentence = (t: Trial): string =>
  `${t.settings}, holder ${t.fate}: ` + (t.released_ms === null ? `the lock was still held ${t.limit_ms / 1000} s later.` : `the lock was free ${shown(t)} later.`);

export const deadSession: Experiment = {
  name: "dead-session",
  title: "How long a session advisory lock outlives its holder",
  describe: "a holder of pg_advisory_lock killed, frozen or cut off (iptables): time until a waiter gets the lock, with Postgres' defaults, TCP keepalives, idle_session_timeout",
  options: OPTIONS,
  quick: { settings: ["defaults", "idle-session-timeout"], fates: ["killed", "frozen"], limit: 4000 },
  starts: () => [SERVER_NEEDS.postgres],
  async run(ctx: ExperimentContext): Promise<Findings> {
    const o = ctx.options;
    const settings = o.settings as string[];
    const fates = o.fates as Fate[];
    if (fates.includes("cut off") && process.getuid?.() !== 0) throw new BadInput("--fates 'cut off' drops packets with iptables, which needs root; leave it out");
    const trials: Trial[] = [];
    for (const name of settings) {
      const runDir = join(ctx.dir, name);
      mkdirSync(join(runDir, "logs"), { recursive: true });
      chmodSync(runDir, 0o755);
      const group = new ProcessGroup(runDir);
      try {
        const cluster = await startPostgresCluster(group, new PortPlan(0), { runDir, durable: false, settings: SETTINGS[name] });
        for (const fate of fates) {
          ctx.log(`dead-session: ${name}, holder ${fate} ...`);
          const t = await trial(group, cluster.nodes[0], name, fate, o.limit as number);
          ctx.log(`dead-session: ${name}, holder ${fate}: released after ${shown(t)}`);
          trials.push(t);
        }
      } finally {
        await group.stopAll();
      }
    }
    return {
      summary: trials.map(sentence),
      tables: [{
        title: "Time from the holder's fault to the waiter's grant",
        head: ["server settings", ...fates],
        rows: settings.map((s) => [s, ...fates.map((f) => shown(trials.find((t) => t.settings === s && t.fate === f)!))]),
        note: "keepalives: tcp_keepalives_idle=1, interval=1, count=3; idle-session-timeout: 2 s. A frozen holder's kernel answers keepalives, so only idle_session_timeout frees its lock; a proxy between the two (as in test:jepsen runs) answers them for any holder.",
      }],
      plots: [],
      data: { trials },
      runs: [],
    };
  },
};
