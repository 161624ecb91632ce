// Ports for a run's servers: free loopback ports of our own, or
// consecutive ones from --port-base. Never a server's well-known default, so a
// run cannot talk to (or be mistaken for) a server the user has: the ones its
// backends' programs declare (ServerProgram.defaultPorts), and Toxiproxy's.
import { createServer } from "node:net";
import { chmodSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ownerAlive, ownerLabel } from "../lib/owner.ts";

/** Toxiproxy's API: the fault proxy speaks its protocol, and a Toxiproxy of the user's may be there. */
export const TOXIPROXY_PORT = 8474;

// A server we start binds its port some time after we chose it (redis-server and
// etcd read it from their command line). A port the kernel handed out and took
// back (listen on 0) is an ephemeral one, and in that gap the kernel may give it
// to any outgoing connection or listener on the machine: with many runs and
// clients at once, sooner or later one does. Ports below the ephemeral range
// (Linux: 32768-60999) are handed out only by explicit binds, so we pick a random
// one there and check that nothing holds it.
const OWN_RANGE = ownRange(process.env.FENCECHECK_PORT_RANGE);

function ownRange(value: string | undefined): { lo: number; hi: number } {
  if (value === undefined || value === "") return { lo: 20000, hi: 32767 };
  const m = /^(\d+)-(\d+)$/.exec(value);
  const [lo, hi] = m ? [Number(m[1]), Number(m[2])] : [NaN, NaN];
  if (!(lo >= 1024 && hi <= 65535 && lo <= hi)) throw new Error(`FENCECHECK_PORT_RANGE=${value} is not LOW-HIGH with 1024 <= LOW <= HIGH <= 65535`);
  return { lo, hi };
}

// Nothing listening on a port is not enough when several fencecheck processes
// draw at once (a soak's jobs, two soaks, a test suite's files): two of them
// can find the same port free, each for a server that binds it only later. So
// every draw is also a reservation shared by every fencecheck process on the
// machine: a file per port in RESERVATIONS, made with O_EXCL (one process can
// make it, whichever comes second is refused), holding its owner (this
// machine, pid and the process's start time). A process's reservations are
// released when it ends, or by PortPlan.release() when a run ends. A process
// killed outright leaves its files: a draw passes over them, and the next
// process to reserve removes those whose owner is gone (one process at a time,
// under a lock: a file read as stale is unlinked by that process only, and no
// other one can make it again before then, since it is still there).
const RESERVATIONS = process.env.FENCECHECK_PORT_RESERVATIONS || "/tmp/fencecheck-ports";
/** A file with no owner written into it yet is a process between its create and its write, unless it is older than this. */
const UNWRITTEN_STALE_MS = 60_000;
const held = new Set<number>();
let swept = false;

function reservationsDir(): string {
  try {
    mkdirSync(RESERVATIONS, { recursive: true });
    // Shared by every user's runs, like /tmp: each may remove only its own files.
    if ((statSync(RESERVATIONS).mode & 0o7777) !== 0o1777) chmodSync(RESERVATIONS, 0o1777);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EPERM") throw new Error(`cannot use ${RESERVATIONS} for port reservations (FENCECHECK_PORT_RESERVATIONS): ${(err as Error).message}`);
  }
  return RESERVATIONS;
}

/** Remove the reservations of processes that are gone; once per process, before its first draw. */
function sweepStale(dir: string): void {
  swept = true;
  const lock = join(dir, ".sweep");
  try {
    mkdirSync(lock);
  } catch {
    // Another process is sweeping (or one died sweeping: its lock goes when stale).
    try {
      if (Date.now() - statSync(lock).mtimeMs > UNWRITTEN_STALE_MS) rmSync(lock, { recursive: true, force: true });
    } catch {}
    return;
  }
  try {
    for (const name of readdirSync(dir)) {
      if (!/^\d+$/.test(name)) continue;
      const file = join(dir, name);
      try {
        const owner = readFileSync(file, "utf8");
        const stale = owner === "" ? Date.now() - statSync(file).mtimeMs > UNWRITTEN_STALE_MS : !ownerAlive(owner);
        if (stale) unlinkSync(file);
      } catch {
        // Gone meanwhile (released), or another user's (the sticky directory): not ours to remove.
      }
    }
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

/** Reserve `port` for this process: false when another process holds it. */
function reserve(port: number): boolean {
  const dir = reservationsDir();
  if (!swept) sweepStale(dir);
  try {
    writeFileSync(join(dir, String(port)), ownerLabel(), { flag: "wx" });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw err;
  }
  if (held.size === 0) process.once("exit", () => releasePorts());
  held.add(port);
  return true;
}

/**
 * Reserve a fixed port (a soak's --metrics-port, served by its runs in turn) so
 * that no other fencecheck process draws it for a server meanwhile: false when
 * another process holds it. Held until this process ends or releases it.
 */
export function reservePort(port: number): boolean {
  return held.has(port) || reserve(port);
}

/** Give back reservations of this process (all of them by default). */
export function releasePorts(ports: Iterable<number> = [...held]): void {
  for (const port of ports) {
    if (!held.delete(port)) continue;
    try {
      unlinkSync(join(RESERVATIONS, String(port)));
    } catch {}
  }
}

const listenable = (port: number): Promise<boolean> =>
  new Promise<boolean>((resolve) => {
    const s = createServer();
    s.once("error", () => resolve(false));
    s.listen(port, "127.0.0.1", () => s.close(() => resolve(true)));
  });

/**
 * A loopback port of our own that nothing listens on now, outside the kernel's
 * ephemeral range, reserved for this process until it ends or releases it.
 */
export async function freePort(avoid: ReadonlySet<number> = new Set()): Promise<number> {
  for (let attempt = 0; ; attempt++) {
    if (attempt > 200) throw new Error(`no free port between ${OWN_RANGE.lo} and ${OWN_RANGE.hi} after ${attempt} tries (reservations: ${RESERVATIONS})`);
    const port = OWN_RANGE.lo + Math.floor(Math.random() * (OWN_RANGE.hi - OWN_RANGE.lo + 1));
    if (port === TOXIPROXY_PORT || avoid.has(port) || held.has(port)) continue;
    if (!reserve(port)) continue;
    if (await listenable(port)) return port;
    // Someone outside fencecheck listens there: not ours after all.
    releasePorts([port]);
  }
}

/**
 * Hands out ports for one run: from `base` upward if given, else free ones, never
 * the same one twice. A free port is only free until its server binds it, and the
 * run's servers start after all their ports are chosen: without remembering, two
 * draws could give one run the same free port (a ZooKeeper ensemble takes nine,
 * and once zk-3's client port was zk-1's election port: zk-1 could not bind it).
 */
export class PortPlan {
  private nextPort: number;
  private readonly given = new Set<number>();
  /** `avoid`: the well-known ports of the servers the run may start, never handed out. */
  constructor(
    private readonly base: number,
    private readonly avoid: ReadonlySet<number> = new Set(),
  ) {
    this.nextPort = base;
  }
  async take(): Promise<number> {
    if (this.base === 0) {
      // freePort never hands this process a port it holds, so never this plan one it gave.
      const port = await freePort(this.avoid);
      this.given.add(port);
      return port;
    }
    while (this.nextPort === TOXIPROXY_PORT || this.avoid.has(this.nextPort)) this.nextPort++;
    return this.nextPort++;
  }

  /** The run is over: its drawn ports go back to every fencecheck process on the machine. */
  release(): void {
    releasePorts(this.given);
    this.given.clear();
  }
}
