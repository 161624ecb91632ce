// Realistic runs for bench:checker and the checker's property tests, made by
// simulating what test:jepsen records rather than by repeating one pattern:
// clients spread over worker processes take leases on a few keys through a lock
// service that queues waiters and lets leases expire, write with their fence to a
// resource that refuses stale fences and logs each decision, and release; a
// nemesis freezes a worker now and then for longer than the lease, so paused
// holders come back to find their lease gone, and a few operations time out
// (info), retiring their process. The counter workload reads the value and writes
// it plus one. Events come out in time order, as a finished run stores them. With
// fencing on, the service and the resource are correct, so the run is valid.
// With `lock: "rw"` the service is a read-write lock (a format 2 history): each
// acquire asks to read or to write, readers share the key and read it with their
// fence, writers hold it alone and write, the resource judging both by the rw
// rule (resource/fences.ts).
import { closeSync, mkdirSync, openSync, writeFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { rng, type Rng } from "../lib/index.ts";
import { FencedStore } from "../resource/fences.ts";
import type { HistoryEvent, HistoryHeader, ResourceDecision } from "../store/events.ts";

export interface SimOptions {
  /** History events to make (about: operations under way are finished). */
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
  /** Lease in ms (default 1000). */
  ttlMs?: number;
  /** Holders renew their lease once before writing (default false). */
  renew?: boolean;
  workload?: "fenced-write" | "counter";
  /** A mutex (default, a format 1 history) or a read-write lock (format 2; fenced-write only). */
  lock?: "mutex" | "rw";
  /** rw: the share of acquires that ask to read (default 0.8). */
  readRatio?: number;
}

/**
 * The two shapes bench:checker times (issue 17). few-keys: eight hot keys that
 * forty clients queue for, waiters overtaking and leases running out under them.
 * many-keys: two thousand keys and two hundred clients, so a key is rarely wanted
 * by two at once and its holds come one after another; every line names one of
 * thousands of keys and hundreds of processes, which the few-keys shape never
 * shows a reader.
 */
export const SHAPES = {
  "few-keys": { keys: 8, clients: 40, workers: 4 },
  "many-keys": { keys: 2000, clients: 200, workers: 4 },
} as const satisfies Record<string, Pick<SimOptions, "keys" | "clients" | "workers">>;
export type Shape = keyof typeof SHAPES;

export interface SimSink {
  header(h: HistoryHeader): void;
  event(e: HistoryEvent): void;
  decision(d: ResourceDecision): void;
}

const MS = 1_000_000;
const ACQUIRE_TIMEOUT = 2000 * MS;
const COMMAND_TIMEOUT = 3000 * MS;

/** A binary heap of timers by (time, insertion order). */
class Timers {
  private t: number[] = [];
  private seq: number[] = [];
  private fn: (() => void)[] = [];
  private n = 0;
  at(time: number, f: () => void): void {
    this.t.push(time);
    this.seq.push(this.n++);
    this.fn.push(f);
    for (let i = this.t.length - 1; i > 0;) {
      const p = (i - 1) >> 1;
      if (!this.less(i, p)) break;
      this.swap(i, p);
      i = p;
    }
  }
  pop(): [number, () => void] | undefined {
    if (this.t.length === 0) return undefined;
    const out: [number, () => void] = [this.t[0], this.fn[0]];
    this.swap(0, this.t.length - 1);
    this.t.pop();
    this.seq.pop();
    this.fn.pop();
    for (let i = 0; ;) {
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

interface Waiter {
  owner: string;
  /** rw: asks to write (a mutex's waiters all do). */
  write: boolean;
  granted: (fence: number) => void;
  done: boolean;
}
interface Lock {
  holder: string | null;
  expires: number;
  fence: number;
  waiters: Waiter[];
  /** rw: every holder's lease end, and which of them writes. */
  held: Map<string, number>;
  writer: string | null;
}
interface Resource {
  max: number | null;
  value: number;
}

/** Runs the simulation, handing its header, events and decisions to `out` in order. */
export function simulate(o: SimOptions, out: SimSink): { events: number; decisions: number } {
  const workload = o.workload ?? "fenced-write";
  const ttl = o.ttlMs ?? 1000;
  const rw = o.lock === "rw";
  const readRatio = o.readRatio ?? 0.8;
  const header: HistoryHeader = { format: 1, kind: "header", run: `sim-${workload}/${o.seed}`, workload, backend: "sim", fencing: o.fencing };
  out.header(rw ? { ...header, format: 2, lock: "rw", client: "sim" } : header);
  // The rw lock's resource: its rule for reads and writes, the store the service itself runs.
  const rwStore = rw ? new FencedStore(o.fencing, true, { kind: "rw", permits: 1 }) : null;
  const timers = new Timers();
  let now = 0;
  let index = 0;
  let seq = 0;
  let nextProcess = o.clients;
  const r: Rng = rng(o.seed, "bench-checker");
  const infoChance = o.infoChance ?? 0.002;
  const locks: Lock[] = Array.from({ length: o.keys }, () => ({ holder: null, expires: 0, fence: 0, waiters: [], held: new Map(), writer: null }));
  const store: Resource[] = Array.from({ length: o.keys }, () => ({ max: null, value: 0 }));
  const pausedUntil: number[] = Array.from({ length: o.workers }, () => 0);

  const emit = (e: Omit<HistoryEvent, "index" | "time">): void => out.event({ index: index++, time: now, ...e } as HistoryEvent);
  const decide = (d: Omit<ResourceDecision, "seq" | "time" | "fencing">): void => out.decision({ seq: ++seq, time: now, ...d, fencing: o.fencing });
  const lat = (): number => Math.round(r.between(0.1, 0.8) * MS);
  const lost = (): boolean => r.next() < infoChance;

  // A client's own steps wait while its worker is frozen; servers go on.
  const clientAt = (worker: number, time: number, f: () => void): void => {
    timers.at(time, function step() {
      if (pausedUntil[worker] > now) timers.at(pausedUntil[worker] + 1, step);
      else f();
    });
  };

  const grantNext = (k: number): void => {
    const lock = locks[k];
    if (rw) return grantNextRw(k);
    while (lock.waiters.length > 0 && (lock.holder === null || lock.expires <= now)) {
      const w = lock.waiters.shift()!;
      if (w.done) continue;
      lock.holder = w.owner;
      lock.expires = now + ttl * MS;
      lock.fence++;
      w.done = true;
      w.granted(lock.fence);
      expireLater(k);
    }
  };
  // An rw lock serves its queue in order: a writer waits for every holder to go,
  // and readers behind a waiting writer wait for it.
  const grantNextRw = (k: number): void => {
    const lock = locks[k];
    for (const [owner, expires] of lock.held) if (expires <= now) letGo(lock, owner);
    while (lock.waiters.length > 0) {
      const w = lock.waiters[0];
      if (!w.done && (w.write ? lock.held.size > 0 : lock.writer !== null)) break;
      lock.waiters.shift();
      if (w.done) continue;
      const expires = now + ttl * MS;
      lock.held.set(w.owner, expires);
      if (w.write) lock.writer = w.owner;
      lock.fence++;
      w.done = true;
      w.granted(lock.fence);
      timers.at(expires, () => {
        if (lock.held.get(w.owner) !== expires) return;
        letGo(lock, w.owner);
        grantNext(k);
      });
    }
  };
  const letGo = (lock: Lock, owner: string): void => {
    lock.held.delete(owner);
    if (lock.writer === owner) lock.writer = null;
  };
  /** Whether `owner` holds the lock now (rw: among its holders). */
  const holding = (lock: Lock, owner: string): boolean => (rw ? (lock.held.get(owner) ?? 0) > now : lock.holder === owner && lock.expires > now);

  const expireLater = (k: number): void => {
    const lock = locks[k];
    const { holder, expires } = lock;
    timers.at(expires, () => {
      if (lock.holder === holder && lock.expires === expires) grantNext(k);
    });
  };

  function client(c: number): void {
    const worker = c % o.workers;
    let process = c;
    let holds = 0;
    const think = (): void => clientAt(worker, now + Math.round(r.exp(4) * MS) + 1, acquire);
    /** An operation whose reply is lost: info after the command timeout, and the client carries on as a new process. */
    const timeout = (f: string, key: string): void =>
      clientAt(worker, now + COMMAND_TIMEOUT, () => {
        emit({ process, type: "info", f, key, error: "timeout" });
        process = nextProcess++;
        think();
      });

    function acquire(): void {
      if (index >= o.events) return;
      const k = r.int(0, o.keys - 1);
      const key = `k${k}`;
      const owner = `c${c}-h${++holds}`;
      const p = process;
      const write = !rw || r.next() >= readRatio;
      const mode = rw ? { mode: write ? "write" : "read" } : {};
      emit({ process: p, type: "invoke", f: "acquire", key, value: { ttl_ms: ttl, ...mode } });
      const invokedAt = now;
      const isLost = lost();
      const waiter: Waiter = {
        owner,
        write,
        done: false,
        granted: (fence) => {
          if (isLost) return;
          clientAt(worker, now + lat(), () => {
            emit({ process: p, type: "ok", f: "acquire", key, value: { owner, fence, ttl_ms: ttl, ...mode } });
            held(k, key, { owner, fence }, write);
          });
        },
      };
      timers.at(now + lat(), () => {
        // A lost reply may still have taken the lock: its lease just runs out.
        if (isLost && r.next() < 0.5) return;
        locks[k].waiters.push(waiter);
        grantNext(k);
      });
      if (isLost) return timeout("acquire", key);
      timers.at(invokedAt + ACQUIRE_TIMEOUT, () => {
        if (waiter.done) return;
        waiter.done = true;
        clientAt(worker, now, () => {
          emit({ process: p, type: "fail", f: "acquire", key, error: "timeout" });
          think();
        });
      });
    }

    /** A round trip to a server that may be lost: `apply` runs at the server (or not, when lost), `reply` back at the client. */
    function call<T>(f: string, key: string, value: Record<string, unknown>, apply: () => T, reply: (result: T) => void): void {
      emit({ process, type: "invoke", f, key, value });
      const isLost = lost();
      timers.at(now + lat(), () => {
        if (isLost && r.next() < 0.5) return;
        const result = apply();
        if (!isLost) clientAt(worker, now + lat(), () => reply(result));
      });
      if (isLost) timeout(f, key);
    }

    function held(k: number, key: string, ref: { owner: string; fence: number }, writes: boolean): void {
      const steps: ((next: () => void) => void)[] = [];
      if (o.renew) steps.push((next) => renew(k, key, ref, next));
      if (!writes) steps.push((next) => readFenced(key, ref, next));
      else if (rw) steps.push((next) => writeRw(key, ref, `${ref.owner}#${ref.fence}`, next));
      else if (workload === "counter") steps.push((next) => read(k, key, ref, (value) => write(k, key, ref, value + 1, next)));
      else steps.push((next) => write(k, key, ref, `${ref.owner}#${ref.fence}`, next));
      steps.push(() => release(k, key, ref));
      const run = (i: number): void => clientAt(worker, now + Math.round(r.between(0.5, 3) * MS), () => steps[i](() => run(i + 1)));
      run(0);
    }

    function renew(k: number, key: string, ref: { owner: string; fence: number }, next: () => void): void {
      const lock = locks[k];
      call("renew", key, { ...ref, ttl_ms: ttl }, () => {
        const mine = holding(lock, ref.owner);
        if (mine && rw) {
          const expires = now + ttl * MS;
          lock.held.set(ref.owner, expires);
          timers.at(expires, () => {
            if (lock.held.get(ref.owner) !== expires) return;
            letGo(lock, ref.owner);
            grantNext(k);
          });
        } else if (mine) {
          lock.expires = now + ttl * MS;
          expireLater(k);
        }
        return mine;
      }, (mine) => {
        if (mine) emit({ process, type: "ok", f: "renew", key, value: { ttl_ms: ttl } });
        else emit({ process, type: "fail", f: "renew", key, error: "not-owner" });
        next();
      });
    }

    function read(k: number, key: string, ref: { owner: string; fence: number }, next: (value: number) => void): void {
      const s = store[k];
      call("read", key, {}, () => {
        decide({ op: "read", key, process, owner: ref.owner, fence: null, max_before: s.max, accepted: true, data: s.value });
        return { value: s.value, fence: s.max };
      }, ({ value, fence }) => {
        emit({ process, type: "ok", f: "read", key, value: { data: value, fence } });
        next(value);
      });
    }

    function write(k: number, key: string, ref: { owner: string; fence: number }, data: unknown, next: () => void): void {
      const s = store[k];
      call("write", key, { ...ref, data }, () => {
        const before = s.max;
        const accepted = !o.fencing || before === null || ref.fence > before;
        if (accepted) {
          if (before === null || ref.fence > before) s.max = ref.fence;
          if (typeof data === "number") s.value = data;
        }
        decide({ op: "write", key, process, owner: ref.owner, fence: ref.fence, max_before: before, accepted, data });
        return { accepted, before };
      }, ({ accepted, before }) => {
        if (accepted) emit({ process, type: "ok", f: "write", key, value: { ...ref, data } });
        else emit({ process, type: "fail", f: "write", key, error: "stale-fence", value: { ...ref, seen: before } });
        next();
      });
    }

    /** An rw reader's read, with its fence, judged by the rw rule. */
    function readFenced(key: string, ref: { owner: string; fence: number }, next: () => void): void {
      call("read", key, ref, () => {
        const j = rwStore!.judgeRead(key, ref.fence);
        const data = rwStore!.get(key).value;
        rwStore!.commit(key, j.next);
        decide({ op: "read", key, process, owner: ref.owner, fence: ref.fence, max_before: j.maxBefore, accepted: j.accepted, data: j.accepted ? data : null });
        return { ...j, data };
      }, (j) => {
        if (j.accepted) emit({ process, type: "ok", f: "read", key, value: { data: j.data, fence: j.next.maxSeen } });
        else emit({ process, type: "fail", f: "read", key, error: "stale-fence", value: { ...ref, seen: j.maxBefore } });
        next();
      });
    }

    /** An rw writer's write, judged by the rw rule. */
    function writeRw(key: string, ref: { owner: string; fence: number }, data: unknown, next: () => void): void {
      call("write", key, { ...ref, data }, () => {
        const j = rwStore!.judgeWrite(key, ref.fence, data);
        rwStore!.commit(key, j.next);
        decide({ op: "write", key, process, owner: ref.owner, fence: ref.fence, max_before: j.maxBefore, accepted: j.accepted, data });
        return j;
      }, (j) => {
        if (j.accepted) emit({ process, type: "ok", f: "write", key, value: { ...ref, data } });
        else emit({ process, type: "fail", f: "write", key, error: "stale-fence", value: { ...ref, seen: j.maxBefore } });
        next();
      });
    }

    function release(k: number, key: string, ref: { owner: string; fence: number }): void {
      const lock = locks[k];
      call("release", key, ref, () => {
        const released = holding(lock, ref.owner);
        if (released) {
          if (rw) letGo(lock, ref.owner);
          lock.holder = null;
          grantNext(k);
        }
        return released;
      }, (released) => {
        emit({ process, type: "ok", f: "release", key, value: { released } });
        think();
      });
    }

    clientAt(worker, Math.round(r.between(0, 5) * MS), acquire);
  }

  for (let c = 0; c < o.clients; c++) client(c);

  const nemesis = (): void => {
    if (index >= o.events) return;
    const w = r.int(0, o.workers - 1);
    const duration = r.int(Math.ceil(ttl / 2), Math.ceil(ttl * 2.5));
    emit({ process: "nemesis", type: "info", f: "start-pause", value: { targets: [`worker-${w + 1}`], duration_ms: duration } });
    pausedUntil[w] = Math.max(pausedUntil[w], now + duration * MS);
    timers.at(now + duration * MS, () => {
      emit({ process: "nemesis", type: "info", f: "stop-pause", value: { targets: [`worker-${w + 1}`] } });
      timers.at(now + Math.round(r.between(ttl, 3 * ttl) * MS), nemesis);
    });
  };
  if (o.nemesis ?? true) timers.at(ttl * MS, nemesis);

  for (let next = timers.pop(); next; next = timers.pop()) {
    now = next[0];
    next[1]();
  }
  return { events: index, decisions: seq };
}

/** Lines to a file in large writes. */
class Lines {
  private buf: string[] = [];
  private size = 0;
  bytes = 0;
  constructor(private readonly fd: number) {}
  add(o: unknown): void {
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

/** A run directory with history.ndjson, resource.ndjson and a run.json naming the options. */
export function generateRun(dir: string, o: SimOptions): { events: number; decisions: number; historyBytes: number; resourceBytes: number } {
  mkdirSync(join(dir, "logs"), { recursive: true });
  const hfd = openSync(join(dir, "history.ndjson"), "w");
  const rfd = openSync(join(dir, "resource.ndjson"), "w");
  const history = new Lines(hfd);
  const resource = new Lines(rfd);
  try {
    const made = simulate(o, { header: (h) => history.add(h), event: (e) => history.add(e), decision: (d) => resource.add(d) });
    history.flush();
    resource.flush();
    writeFileSync(join(dir, "run.json"), JSON.stringify({ test: "bench-checker", seed: o.seed, options: { ...o } }, null, 2) + "\n");
    return { ...made, historyBytes: history.bytes, resourceBytes: resource.bytes };
  } finally {
    closeSync(hfd);
    closeSync(rfd);
  }
}
