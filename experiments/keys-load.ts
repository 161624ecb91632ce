// What the keys experiment's loads share, whichever backend holds the locks: the
// locks drawn from the seed, when a load stops short (Ctrl-C, the time limit, the
// machine running out of memory), a sampler that asks the server once a second,
// and the progress line.
import { readFileSync } from "node:fs";
import { rng } from "../lib/index.ts";

/** What every backend's load is told. */
export interface LoadOptions {
  keys: number;
  ttlMs: number;
  seed: number;
  /** Seconds to watch after the last lock's TTL has passed. */
  observeS: number;
  loadLimitS: number;
  /** The experiment's directory: the servers' data and logs go under it. */
  dir: string;
  stop: Stopper;
  log(line: string): void;
}

export interface LockDraw {
  /** The lock's name: the key a client would lock. */
  name: string;
  /** Its owner: the random value the holder's release and renew compare against. */
  owner: string;
}

/**
 * The seed's locks, one after the other: the same seed gives the same names and
 * owners to every backend and every run. 64 random bits per name: among ten
 * million the chance of two alike is about 3 in a million, and a name drawn twice
 * would be a lock refused as busy, counted as such.
 */
export function lockDraws(seed: number): () => LockDraw {
  const r = rng(seed, "keys");
  const hex = (): string => Math.floor(r.next() * 4294967296).toString(16).padStart(8, "0");
  return () => ({ name: `lock:${hex()}${hex()}`, owner: `${hex()}${hex()}` });
}

/** Seconds since `t0` (performance.now()), to the millisecond. */
export const since = (t0: number): number => Math.round(performance.now() - t0) / 1000;

/**
 * How the experiment stops early. An interruption (Ctrl-C) ends everything: the
 * load in progress, the watching, the backends not yet run. The time limit and
 * the memory floor end one load only; what was loaded is still watched expiring.
 */
export class Stopper {
  interrupted: string | null = null;
  private readonly waiters = new Set<() => void>();

  interrupt(why: string): void {
    if (this.interrupted) return;
    this.interrupted = why;
    for (const w of this.waiters) w();
    this.waiters.clear();
  }

  /** Sleep `ms`, or less if interrupted meanwhile. */
  wait(ms: number): Promise<void> {
    if (this.interrupted || ms <= 0) return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.waiters.add(done);
    });
  }
}

/** MemAvailable and MemTotal of this machine in bytes (Linux), or null where there is no /proc. */
export function machineMemory(): { available: number; total: number } | null {
  try {
    const info = readFileSync("/proc/meminfo", "utf8");
    const kb = (field: string): number => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(info)?.[1] ?? NaN) * 1024;
    const m = { available: kb("MemAvailable"), total: kb("MemTotal") };
    return Number.isFinite(m.available) && Number.isFinite(m.total) ? m : null;
  } catch {
    return null;
  }
}

/** The resident memory of a process in bytes, or 0 once it is gone. */
export function rssOf(pid: number): number {
  try {
    return Number(/^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0) * 1024;
  } catch {
    return 0;
  }
}

/**
 * Below this share of the machine's memory left, a load stops: what a lock server
 * may take is what the machine has, and a load must not push the machine (shared
 * with other work) into the kernel's OOM killer to find out.
 */
const MEMORY_FLOOR = 0.1;

/** Why a load should stop now, or null to go on. */
export function loadLimitReached(stop: Stopper, startedAt: number, limitS: number): string | null {
  if (stop.interrupted) return stop.interrupted;
  if ((performance.now() - startedAt) / 1000 > limitS) return `the load limit of ${limitS} s`;
  const m = machineMemory();
  if (m && m.available < MEMORY_FLOOR * m.total)
    return `the machine had ${size(m.available)} of ${size(m.total)} left (less than ${MEMORY_FLOOR * 100}%)`;
  return null;
}

/**
 * Calls `take` once a second into `samples`; a slow answer (a server busy with a
 * batch) delays the next sample rather than piling requests up behind it.
 */
export function sampleEverySecond<T>(take: () => Promise<T | null>, samples: T[]): { stop(): Promise<void>; now(): Promise<void> } {
  let running: Promise<void> = Promise.resolve();
  let busy = false;
  const once = (): Promise<void> => {
    if (busy) return running;
    busy = true;
    running = take()
      .then((s) => void (s && samples.push(s)))
      .catch(() => {})
      .finally(() => (busy = false));
    return running;
  };
  const timer = setInterval(() => void once(), 1000);
  return {
    now: async () => {
      await running;
      await once();
    },
    stop: async () => {
      clearInterval(timer);
      await running;
    },
  };
}

/** A progress line on stderr every few seconds: done of total, rate, time left. */
export function progress(log: (line: string) => void, label: string, total: number, extra: () => string = () => ""): { update(done: number): void; end(done: number): void } {
  const t0 = performance.now();
  let last = t0;
  const line = (done: number): string => {
    const s = (performance.now() - t0) / 1000;
    const rate = s > 0 ? done / s : 0;
    const eta = rate > 0 && done < total ? ` ETA ${Math.round((total - done) / rate)} s,` : "";
    return `${label}: ${count(done)}/${count(total)} locks in ${s.toFixed(0)} s, ${count(Math.round(rate))}/s,${eta} ${extra()}`.trimEnd().replace(/,$/, "");
  };
  return {
    update(done) {
      if (performance.now() - last < 5000) return;
      last = performance.now();
      log(line(done));
    },
    end: (done) => log(line(done)),
  };
}

export const count = (n: number): string => n.toLocaleString("en-US");
/** 24 kB, 4.6 MB, 512 MB, 1.62 GB. */
export function size(bytes: number): string {
  if (bytes >= 1e9) return `${(bytes / 1e9).toFixed(2)} GB`;
  if (bytes >= 1e6) return `${(bytes / 1e6).toFixed(bytes < 1e8 ? 1 : 0)} MB`;
  return `${Math.round(bytes / 1e3)} kB`;
}
