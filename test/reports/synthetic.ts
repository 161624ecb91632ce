// A generated run of any size, for the size test and the sample page. Clients loop
// acquire / write... / release against a simulated lease lock and fenced resource;
// now and then a client stalls mid-write longer than its lease (a GC pause), so
// another client takes the lock and the stalled write arrives stale: refused with
// fencing on, accepted (a stale-write-accepted witness) with fencing off. Some
// acquires time out, which retires the process. A nemesis starts and stops faults.
// Deterministic: a seeded generator.
import type { HistoryEvent, HistoryHeader, ResourceDecision, Results, Witness } from "../../store/events.ts";

export interface Synthetic {
  header: HistoryHeader;
  events: HistoryEvent[];
  decisions: ResourceDecision[];
  results: Results;
}

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const MS = 1e6, TTL = 500;

interface Client { p: number; next: number; step: (now: number) => void }

export function synthetic(opts: { events: number; clients: number; keys?: number; seed?: number; fencing?: boolean }): Synthetic {
  const rand = rng(opts.seed ?? 1);
  const fencing = opts.fencing ?? true;
  const keys = Array.from({ length: opts.keys ?? 2 }, (_, i) => `key-${i}`);
  const raw: Omit<HistoryEvent, "index">[] = [];
  const decisions: ResourceDecision[] = [];
  const lock = new Map<string, { owner: string; expires: number }>();
  const fenceOf = new Map<string, number>();
  const maxAccepted = new Map<string, number>();
  let owners = 0, nextProcess = opts.clients;
  const emit = (e: Omit<HistoryEvent, "index">) => raw.push(e);

  const clients: Client[] = Array.from({ length: opts.clients }, (_, c) => {
    const client: Client = { p: c, next: rand() * 20 * MS, step: () => {} };
    const idle = (now: number) => {
      const key = keys[Math.floor(rand() * keys.length)];
      emit({ time: now, process: client.p, type: "invoke", f: "acquire", key, value: { ttl_ms: TTL } });
      client.next = now + (0.5 + rand() * 3) * MS;
      client.step = (t) => granted(t, now, key);
    };
    const granted = (now: number, invokedAt: number, key: string) => {
      const held = lock.get(key);
      if (rand() < 0.01) {
        emit({ time: now + 300 * MS, process: client.p, type: "info", f: "acquire", key, error: "timeout" });
        client.p = nextProcess++;
        client.next = now + 310 * MS;
        client.step = idle;
        return;
      }
      if (held && held.expires > now) {
        emit({ time: now, process: client.p, type: "fail", f: "acquire", key, error: "busy" });
        client.next = now + (5 + rand() * 30) * MS;
        client.step = idle;
        return;
      }
      const owner = `o${owners++}`, fence = (fenceOf.get(key) ?? 0) + 1;
      fenceOf.set(key, fence);
      lock.set(key, { owner, expires: invokedAt + TTL * MS });
      emit({ time: now, process: client.p, type: "ok", f: "acquire", key, value: { owner, fence, ttl_ms: TTL } });
      write(now + (1 + rand() * 5) * MS, key, owner, fence, 1 + Math.floor(rand() * 3));
    };
    const write = (at: number, key: string, owner: string, fence: number, left: number) => {
      client.next = at;
      client.step = (now) => {
        const value = { owner, fence, data: `${owner}:${left}` };
        emit({ time: now, process: client.p, type: "invoke", f: "write", key, value });
        const stall = rand() < 0.02 ? (TTL + 100 + rand() * 300) * MS : 0;
        client.next = now + stall + (0.5 + rand() * 2) * MS;
        client.step = (t) => {
          const before = maxAccepted.get(key) ?? null;
          const accepted = !fencing || before === null || fence > before;
          if (accepted) maxAccepted.set(key, Math.max(before ?? 0, fence));
          decisions.push({ seq: 0, time: t, op: "write", key, process: client.p, owner, fence, max_before: before, accepted, data: value.data, fencing });
          emit(accepted
            ? { time: t + 0.3 * MS, process: client.p, type: "ok", f: "write", key, value }
            : { time: t + 0.3 * MS, process: client.p, type: "fail", f: "write", key, value: { owner, fence, seen: before }, error: "stale-fence" });
          if (left > 1 && accepted) write(t + (1 + rand() * 8) * MS, key, owner, fence, left - 1);
          else release(t + (1 + rand() * 4) * MS, key, owner, fence);
        };
      };
    };
    const release = (at: number, key: string, owner: string, fence: number) => {
      client.next = at;
      client.step = (now) => {
        emit({ time: now, process: client.p, type: "invoke", f: "release", key, value: { owner, fence } });
        const mine = lock.get(key)?.owner === owner;
        if (mine) lock.delete(key);
        emit({ time: now + (0.5 + rand()) * MS, process: client.p, type: "ok", f: "release", key, value: { released: mine } });
        client.next = now + (2 + rand() * 20) * MS;
        client.step = idle;
      };
    };
    client.step = idle;
    return client;
  });

  while (raw.length < opts.events) {
    let c = clients[0];
    for (const d of clients) if (d.next < c.next) c = d;
    c.step(c.next);
  }
  const end = raw.reduce((m, e) => Math.max(m, e.time), 0);
  const kinds: [string, string][] = [["start-pause", "stop-pause"], ["start-partition", "stop-partition"], ["bump-clock", "reset-clock"]];
  for (let t = 300 * MS, i = 0; t < end; t += (1500 + rand() * 2500) * MS, i++) {
    const [start, stop] = kinds[i % kinds.length];
    const targets = [`redis-${1 + (i % 3)}`];
    emit({ time: t, process: "nemesis", type: "info", f: start, value: { targets, ...(start === "bump-clock" ? { offset_ms: 20000 } : {}) } });
    emit({ time: Math.min(end, t + (300 + rand() * 700) * MS), process: "nemesis", type: "info", f: stop, value: { targets } });
  }
  raw.sort((a, b) => a.time - b.time);
  const events: HistoryEvent[] = raw.map((e, index) => ({ ...e, time: Math.round(e.time), index }));
  decisions.sort((a, b) => a.time - b.time).forEach((d, i) => { d.seq = i + 1; d.time = Math.round(d.time); });
  return { header: { format: 1, kind: "header", run: `synthetic-${opts.events}`, workload: "fenced-write", backend: "redis", fencing }, events, decisions, results: judge(events, decisions) };
}

/** Stale writes that took effect, found the simple way a test fixture can afford. */
function judge(events: HistoryEvent[], decisions: ResourceDecision[]): Results {
  const writesOf = new Map<string, HistoryEvent[]>();
  for (const e of events) {
    const owner = e.f === "write" && typeof e.value?.owner === "string" ? e.value.owner : undefined;
    if (owner !== undefined) writesOf.set(owner, [...(writesOf.get(owner) ?? []), e]);
  }
  // The invoke that led to decision d and its completion: the last write invoke before it.
  const writeEvents = (d: ResourceDecision) => {
    const list = writesOf.get(d.owner) ?? [];
    let at = -1;
    list.forEach((e, i) => { if (e.type === "invoke" && e.time <= d.time) at = i; });
    return at < 0 ? [] : list.slice(at, at + 2).map((e) => e.index);
  };
  const last = new Map<string, ResourceDecision>();
  const witnesses: Witness[] = [];
  for (const d of decisions) {
    const prev = last.get(d.key);
    if (d.accepted && prev && d.fence !== null && prev.fence !== null && d.fence < prev.fence) {
      witnesses.push({
        key: d.key, seqs: [prev.seq, d.seq], events: [...writeEvents(prev), ...writeEvents(d)],
        explanation: `Write seq ${d.seq} of hold ${d.owner} with fence ${d.fence} took effect after write seq ${prev.seq} of hold ${prev.owner} with the higher fence ${prev.fence}.`,
      });
    }
    if (d.accepted && (!prev || (d.fence ?? 0) >= (prev.fence ?? 0))) last.set(d.key, d);
  }
  const end = events.length ? events[events.length - 1].time : 0;
  const refused = decisions.filter((d) => !d.accepted).length;
  return {
    valid: witnesses.length ? false : true,
    anomaly_types: witnesses.length ? ["stale-write-accepted"] : [],
    anomalies: witnesses.length ? { "stale-write-accepted": witnesses } : {},
    stats: {
      events: events.length, duration_s: end / 1e9, ops_per_s: events.length / 2 / (end / 1e9 || 1),
      acquire_latency_ms: { p50: 1.9, p99: 3.4, max: 300 }, writes_accepted: decisions.length - refused,
      stale_writes_refused: refused, lease_overlaps: 0, faults: { "start-pause": 1, "start-partition": 1, "bump-clock": 1 },
    },
  };
}
