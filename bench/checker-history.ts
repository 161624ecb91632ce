// A large, realistic fenced-write run for bench:checker, made by simulating what
// test:jepsen records rather than by repeating one pattern: clients spread over
// worker processes take leases on a few keys through a lock service that queues
// waiters and lets leases expire, write with their fence to a resource that
// refuses stale fences and logs each decision, and release; a nemesis freezes a
// worker now and then for longer than the lease, so paused holders come back to
// find their lease gone, and a few operations time out (info), retiring their
// process. The events come out in time order, as a finished run stores them.
import { closeSync, mkdirSync, openSync, writeFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { rng, type Rng } from "../lib/index.ts";

export interface GenOptions {
  /** History events to write (about; the last hold may add a few). */
  events: number;
  seed: number;
  keys: number;
  clients: number;
  workers: number;
  fencing: boolean;
  /** Freeze workers past their leases now and then (default true). */
  nemesis?: boolean;
  /** Chance that an operation's reply is lost (default 0.002). */
  infoChance?: number;
}

export interface GenResult {
  events: number;
  decisions: number;
  historyBytes: number;
  resourceBytes: number;
}

const MS = 1_000_000;
const TTL_MS = 1000;
const ACQUIRE_TIMEOUT = 2000 * MS;
const COMMAND_TIMEOUT = 3000 * MS;

/** A binary heap of timers by (time, insertion order). */
class Timers {
  private t: number[] = [];
  private seq: number[] = [];
  private fn: (() => void)[] = [];
  private n = 0;
  at(time: number, f: () => void): void {
    const s = this.n++;
    this.t.push(time);
    this.seq.push(s);
    this.fn.push(f);
    let i = this.t.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!this.less(i, p)) break;
      this.swap(i, p);
      i = p;
    }
  }
  pop(): [number, () => void] | undefined {
    if (this.t.length === 0) return undefined;
    const out: [number, () => void] = [this.t[0], this.fn[0]];
    const last = this.t.length - 1;
    this.swap(0, last);
    this.t.pop();
    this.seq.pop();
    this.fn.pop();
    let i = 0;
    for (;;) {
      const l = 2 * i + 1, r = l + 1;
      let m = i;
      if (l < this.t.length && this.less(l, m)) m = l;
      if (r < this.t.length && this.less(r, m)) m = r;
      if (m === i) break;
      this.swap(i, m);
      i = m;
    }
    return out;
  }
  private less(a: number, b: number): boolean {
    return this.t[a] < this.t[b] || (this.t[a] === this.t[b] && this.seq[a] < this.seq[b]);
  }
  private swap(a: number, b: number): void {
    [this.t[a], this.t[b]] = [this.t[b], this.t[a]];
    [this.seq[a], this.seq[b]] = [this.seq[b], this.seq[a]];
    [this.fn[a], this.fn[b]] = [this.fn[b], this.fn[a]];
  }
}

interface Lock {
  holder: string | null;
  expires: number;
  fence: number;
  waiters: Waiter[];
}
interface Waiter {
  owner: string;
  granted: (fence: number) => void;
  done: boolean;
}

class Writer {
  private buf: string[] = [];
  private size = 0;
  bytes = 0;
  constructor(private readonly fd: number) {}
  line(o: unknown): void {
    const s = JSON.stringify(o) + "\n";
    this.buf.push(s);
    this.size += s.length;
    if (this.size > 4 << 20) this.flush();
  }
  flush(): void {
    const text = this.buf.join("");
    this.bytes += Buffer.byteLength(text);
    writeSync(this.fd, text);
    this.buf = [];
    this.size = 0;
  }
}

export function generateRun(dir: string, o: GenOptions): GenResult {
  mkdirSync(join(dir, "logs"), { recursive: true });
  const hfd = openSync(join(dir, "history.ndjson"), "w");
  const rfd = openSync(join(dir, "resource.ndjson"), "w");
  const history = new Writer(hfd);
  const resource = new Writer(rfd);
  const run = `bench-fenced-write/${o.seed}`;
  history.line({ format: 1, kind: "header", run, workload: "fenced-write", backend: "redis", fencing: o.fencing });

  const timers = new Timers();
  let now = 0;
  let index = 0;
  let seq = 0;
  let nextProcess = o.clients;
  const r: Rng = rng(o.seed, "bench-checker");
  const INFO_P = o.infoChance ?? 0.002;
  const locks: Lock[] = Array.from({ length: o.keys }, () => ({ holder: null, expires: 0, fence: 0, waiters: [] }));
  const maxFence: (number | null)[] = Array.from({ length: o.keys }, () => null);
  const pausedUntil: number[] = Array.from({ length: o.workers }, () => 0);

  const emit = (e: Record<string, unknown>): void => {
    history.line({ index: index++, time: now, ...e });
  };
  const lat = (): number => Math.round(r.between(0.1, 0.8) * MS);

  // A client's own steps wait while its worker is frozen; servers go on.
  const clientAt = (worker: number, time: number, f: () => void): void => {
    timers.at(time, function step() {
      if (pausedUntil[worker] > now) timers.at(pausedUntil[worker] + 1, step);
      else f();
    });
  };

  const grantNext = (k: number): void => {
    const lock = locks[k];
    while (lock.waiters.length > 0 && (lock.holder === null || lock.expires <= now)) {
      const w = lock.waiters.shift()!;
      if (w.done) continue;
      lock.holder = w.owner;
      lock.expires = now + TTL_MS * MS;
      lock.fence++;
      w.done = true;
      w.granted(lock.fence);
      const { holder, expires } = lock;
      timers.at(expires, () => {
        if (lock.holder === holder && lock.expires === expires) grantNext(k);
      });
    }
  };

  function client(c: number): void {
    const worker = c % o.workers;
    let process = c;
    let holds = 0;
    const retire = (): void => {
      process = nextProcess++;
    };

    const think = (): void => clientAt(worker, now + Math.round(r.exp(4) * MS) + 1, acquire);

    function acquire(): void {
      if (index >= o.events) return;
      const k = r.int(0, o.keys - 1);
      const key = `k${k}`;
      const owner = `c${c}-h${++holds}`;
      const p = process;
      emit({ process: p, type: "invoke", f: "acquire", key, value: { ttl_ms: TTL_MS } });
      const invokedAt = now;
      const lost = r.next() < INFO_P;
      const waiter: Waiter = {
        owner,
        done: false,
        granted: (fence) => {
          if (lost) return;
          clientAt(worker, now + lat(), () => {
            emit({ process: p, type: "ok", f: "acquire", key, value: { owner, fence, ttl_ms: TTL_MS } });
            hold(k, key, owner, fence, 1);
          });
        },
      };
      timers.at(now + lat(), () => {
        // A lost reply may still have taken the lock: its lease just runs out.
        if (lost && r.next() < 0.5) return;
        locks[k].waiters.push(waiter);
        grantNext(k);
      });
      if (lost) {
        clientAt(worker, invokedAt + COMMAND_TIMEOUT, () => {
          emit({ process: p, type: "info", f: "acquire", key, error: "timeout" });
          retire();
          think();
        });
        return;
      }
      timers.at(invokedAt + ACQUIRE_TIMEOUT, () => {
        if (waiter.done) return;
        waiter.done = true;
        clientAt(worker, now, () => {
          emit({ process: p, type: "fail", f: "acquire", key, error: "timeout" });
          think();
        });
      });
    }

    function hold(k: number, key: string, owner: string, fence: number, writes: number): void {
      const p = process;
      const ref = { owner, fence };
      clientAt(worker, now + Math.round(r.between(0.5, 3) * MS), function write(): void {
        if (writes === 0) return release(k, key, owner, fence);
        writes--;
        const data = `${owner}#${fence}`;
        emit({ process: p, type: "invoke", f: "write", key, value: { ...ref, data } });
        const lost = r.next() < INFO_P;
        timers.at(now + lat(), () => {
          if (lost && r.next() < 0.5) return;
          const before = maxFence[k];
          const accepted = !o.fencing || before === null || fence > before;
          if (accepted && (before === null || fence > before)) maxFence[k] = fence;
          resource.line({ seq: ++seq, time: now, op: "write", key, process: p, owner, fence, max_before: before, accepted, data, fencing: o.fencing });
          if (lost) return;
          clientAt(worker, now + lat(), () => {
            if (accepted) emit({ process: p, type: "ok", f: "write", key, value: { ...ref, data } });
            else emit({ process: p, type: "fail", f: "write", key, error: "stale-fence", value: { ...ref, seen: before } });
            clientAt(worker, now + 1, write);
          });
        });
        if (lost) {
          clientAt(worker, now + COMMAND_TIMEOUT, () => {
            emit({ process: p, type: "info", f: "write", key, error: "timeout" });
            retire();
            think();
          });
        }
      });
    }

    function release(k: number, key: string, owner: string, fence: number): void {
      const p = process;
      emit({ process: p, type: "invoke", f: "release", key, value: { owner, fence } });
      const lost = r.next() < INFO_P;
      timers.at(now + lat(), () => {
        if (lost && r.next() < 0.5) return;
        const lock = locks[k];
        const released = lock.holder === owner && lock.expires > now;
        if (released) {
          lock.holder = null;
          grantNext(k);
        }
        if (lost) return;
        clientAt(worker, now + lat(), () => {
          emit({ process: p, type: "ok", f: "release", key, value: { released } });
          think();
        });
      });
      if (lost) {
        clientAt(worker, now + COMMAND_TIMEOUT, () => {
          emit({ process: p, type: "info", f: "release", key, error: "timeout" });
          retire();
          think();
        });
      }
    }

    clientAt(worker, Math.round(r.between(0, 5) * MS), acquire);
  }

  for (let c = 0; c < o.clients; c++) client(c);

  const nemesis = (): void => {
    if (index >= o.events) return;
    const w = r.int(0, o.workers - 1);
    const duration = r.int(500, 2500);
    emit({ process: "nemesis", type: "info", f: "start-pause", value: { targets: [`worker-${w + 1}`], duration_ms: duration } });
    pausedUntil[w] = Math.max(pausedUntil[w], now + duration * MS);
    timers.at(now + duration * MS, () => {
      emit({ process: "nemesis", type: "info", f: "stop-pause", value: { targets: [`worker-${w + 1}`] } });
      timers.at(now + Math.round(r.between(1000, 3000) * MS), nemesis);
    });
  };
  if (o.nemesis ?? true) timers.at(1000 * MS, nemesis);

  for (let next = timers.pop(); next; next = timers.pop()) {
    now = next[0];
    next[1]();
  }
  history.flush();
  resource.flush();
  closeSync(hfd);
  closeSync(rfd);
  writeFileSync(join(dir, "run.json"), JSON.stringify({ test: "bench-fenced-write", seed: o.seed, options: { ...o } }, null, 2) + "\n");
  return { events: index, decisions: seq, historyBytes: history.bytes, resourceBytes: resource.bytes };
}
