// A fuzz case's execution: the Plan's steps played by logical clients against the
// lock service (lock-service.ts) and the resource (resource-model.ts), recorded as
// the runner records a run. Each step moves one client (or the nemesis) after some
// time: a client with an operation outstanding gets its reply (or waits on), a
// holder writes, reads, renews, re-enters or releases, an idle client acquires.
// What the service and the resource do happens between an operation's invoke and
// its completion, so a correct service and resource give a valid history; the
// Plan's defects, fencing off, fences per client and holders frozen past their
// leases give the anomalies.
//
// The history keeps the format's own rules (docs/history-format.md) whatever the
// Plan: times that only go up, indexes from 0, one operation outstanding per
// process, every invoke completed by its process and f or left open at the end, a
// process retired after an info (its client carries on as process + clients, and
// abandons its hold to the lease, as workloads/hold.ts does), owners unique per
// acquire, a notice only in format 2. What it does not promise is a valid verdict.
import type { HistoryEvent, HistoryHeader, ResourceDecision } from "../../../store/events.ts";
import type { ProtocolError } from "../../../store/protocol-errors.ts";
import { Dice } from "./dice.ts";
import { LockService } from "./lock-service.ts";
import type { Defect, Plan, Step } from "./plan.ts";
import { ResourceModel } from "./resource-model.ts";

const MS = 1e6;
/** The shortest step: room for the few events of one move, TICK_NS apart. */
const MIN_STEP_NS = 20_000;
/**
 * Between two events of one move (an operation invoked and answered at once): room
 * for the service's and the resource's moments between them (effectAt).
 */
const TICK_NS = 1000;

export interface Execution {
  header: HistoryHeader;
  events: HistoryEvent[];
  /** resource.ndjson's lines in file order; null: the run has no resource log. */
  decisions: ResourceDecision[] | null;
  /** protocol-errors.ndjson's lines, in time order ([]: no file). */
  protocolErrors: ProtocolError[];
  /** The time of the last event (ns): a cut-short line comes after it. */
  end: number;
}

/** A hold as its client knows it. */
interface Held {
  key: string;
  owner: string;
  /** The fence of each entry of the hold, outermost first: its depth is their number. */
  fences: (number | null)[];
  mode?: "read" | "write";
  /** Counter: the value read in this hold, not yet written back. */
  read?: number;
  writes: number;
  /** A renew failed or the counter's write is done: the next move releases. */
  doomed: boolean;
  /** A lost notice named it: used no more, not released. */
  told: boolean;
  /** A re-entry granted without its outer hold (the reentry-other defect): let go after its release. */
  bogus: boolean;
}

type PendingKind = "acquire" | "reenter" | "bogus" | "renew" | "release" | "write" | "read";

interface Pending {
  kind: PendingKind;
  f: string;
  key: string;
  /** Invoke time, ns. */
  at: number;
  value: Record<string, unknown>;
  /** Acquires: the owner the service's entry for it is made for, the entry it queued behind, exclusive or not. */
  entry?: string;
  ahead?: string | null;
  write?: boolean;
  /** Writes: their data. Reads: whether they carry the hold's fence. */
  data?: unknown;
  fenced?: boolean;
}

interface Client {
  id: number;
  process: number;
  /** Owners made so far (c<id>-h<n>). */
  made: number;
  pending: Pending | null;
  held: Held | null;
  /** An entry of this client's withdrawn wait that the service kept (cancel-leak). */
  left: { key: string; owner: string } | null;
}

/** A write whose reply was lost and whose request is still on its way to the resource. */
interface InFlight {
  key: string;
  process: number;
  owner: string;
  fence: number | null;
  data: unknown;
}

const FAULTS = [
  { start: "start-pause", stop: "stop-pause", value: (n: number) => ({ targets: [`worker-${n}`], duration_ms: 500 }) },
  { start: "start-partition", stop: "stop-partition", value: (n: number) => ({ targets: [`worker-${n}->server-1`], grudge: "primaries", duration_ms: 800 }) },
  { start: "start-latency", stop: "stop-latency", value: (n: number) => ({ targets: [`worker-${n}->resource`], latency_ms: 150, jitter_ms: 0, duration_ms: 900 }) },
  { start: "bump-clock", stop: "reset-clock", value: (n: number) => ({ targets: [`server-${n}`], mode: "bump", offset_ms: 9000, duration_ms: 2000 }) },
  { start: "kill", stop: "restart", value: (n: number) => ({ targets: [`server-${n}`], restart_delay_ms: 300 }) },
] as const;

class Recorder {
  readonly events: HistoryEvent[] = [];
  readonly protocolErrors: ProtocolError[] = [];
  private readonly service: LockService;
  readonly resource: ResourceModel;
  private readonly clients: Client[];
  private readonly inflight: InFlight[] = [];
  private readonly faults: (typeof FAULTS)[number][] = [];
  private t = 0;
  /** Server-side moments taken in the current step (effectAt). */
  private moments = 0;
  private readonly ttl: number;
  /** Plans kept before adapters were fuzzed have none. */
  private readonly adapter: Plan["adapter"];

  constructor(private readonly plan: Plan) {
    this.adapter = plan.adapter ?? "none";
    this.service = new LockService(plan);
    this.resource = new ResourceModel(plan);
    this.clients = Array.from({ length: plan.clients }, (_, id) => ({ id, process: id, made: 0, pending: null, held: null, left: null }));
    this.ttl = plan.ttlMs;
  }

  private has(d: Defect): boolean {
    return this.plan.defects.includes(d);
  }

  play(): void {
    const actors = this.plan.clients + (this.plan.nemesis ? 1 : 0);
    for (const s of this.plan.steps) {
      const d = new Dice(s.luck);
      const dt = this.plan.tempo === "stormy" && d.chance("storm", 12) ? Math.max(s.dt, 1200) : s.dt;
      this.t += Math.max(MIN_STEP_NS, Math.round(dt * this.ttl * 1000));
      this.moments = 0;
      this.deliver(d);
      this.stray(s.who % this.plan.clients, d);
      if (this.has("resource-restart") && d.chance("restart", 3)) this.resource.restart();
      const who = s.who % actors;
      if (who === this.plan.clients) this.nemesis(d);
      else this.move(this.clients[who], s, d);
    }
    if (this.plan.ending === "drain") {
      // The run's end: every client's last operation answered, the faults healed.
      for (const c of this.clients) {
        if (!c.pending) continue;
        this.t += MS;
        this.moments = 0;
        this.finish(c, { who: c.id, dt: 0, act: 0, luck: 0x5eed + c.id }, new Dice(0x5eed + c.id), "final");
      }
      while (this.faults.length) {
        this.t += MS;
        this.stopFault();
      }
    }
  }

  get end(): number {
    return this.t;
  }

  private emit(e: Omit<HistoryEvent, "index" | "time">): void {
    this.events.push({ index: this.events.length, time: this.t, ...e } as HistoryEvent);
    this.t += TICK_NS;
    this.moments = 0;
  }

  /**
   * A moment for the service or the resource to act: after every event so far
   * (each is followed by TICK_NS, each step starts MIN_STEP_NS on), before the next.
   */
  private effectAt(): number {
    return this.t - TICK_NS / 2 + this.moments++;
  }

  /** A write whose reply was lost may reach the resource in a later step. */
  private deliver(d: Dice): void {
    if (this.inflight.length === 0 || !d.chance("deliver", 20)) return;
    const w = this.inflight.shift()!;
    this.resource.write(this.effectAt(), w.key, w.process, w.owner, w.fence, w.data, d);
  }

  private nemesis(d: Dice): void {
    if (this.faults.length > 0 && (this.faults.length >= 2 || d.chance("heal", 50))) return this.stopFault();
    const fault = FAULTS[d.between("fault", 0, FAULTS.length - 1)];
    this.faults.push(fault);
    this.emit({ process: "nemesis", type: "info", f: fault.start, value: fault.value(d.between("target", 1, 3)) });
  }

  private stopFault(): void {
    const fault = this.faults.shift()!;
    this.emit({ process: "nemesis", type: "info", f: fault.stop, value: { targets: ["all"] } });
  }

  private move(c: Client, s: Step, d: Dice): void {
    if (c.pending) {
      // Its reply is still on the way.
      if (s.act >= 94) return;
      if (this.plan.notices && c.held && s.act >= 88 && this.lostAtService(c.held)) return this.notice(c, d);
      return this.finish(c, s, d, "later");
    }
    if (c.held) this.holderMove(c, s, d);
    else this.idleMove(c, s, d);
    // Most operations are answered at once; the others stay outstanding while the
    // other clients move (a slow reply, a waiter in the queue).
    if (c.pending && d.chance("quick", 75)) this.finish(c, s, d, "at-once");
  }

  private lostAtService(h: Held): boolean {
    return !this.service.holds(h.key, h.owner, this.t);
  }

  /** The library tells its user the hold is lost; the user drops it (no more writes, no release). */
  private notice(c: Client, d: Dice): void {
    const h = c.held!;
    const named = d.chance("notice-named", 80);
    this.emit({ process: c.process, type: "notice", f: "lost", key: h.key, value: { owner: named ? h.owner : null } });
    h.told = true;
    if (!c.pending) c.held = null;
  }

  private holderMove(c: Client, s: Step, d: Dice): void {
    const h = c.held!;
    const a = s.act;
    if (a >= 95) return;
    if (a >= 89) {
      if (!this.plan.notices) return;
      if (this.lostAtService(h)) return this.notice(c, d);
      if (d.chance("chatter", 25)) this.emit({ process: c.process, type: "notice", f: d.chance("which", 50) ? "suspended" : "reconnected", value: { owner: h.owner } });
      return;
    }
    if (h.doomed || a >= 70) return this.invokeRelease(c, d);
    const work = this.plan.holdMix === "writes" ? 60 : 45;
    if (a >= 55 && a >= work && this.plan.lock === "reentrant" && !h.bogus) return this.invokeReenter(c);
    if (a >= work) return this.invoke(c, { kind: "renew", f: "renew", key: h.key, at: this.t, value: { owner: h.owner, fence: h.fences.at(-1)!, ttl_ms: this.ttl } });
    // The hold's work: an rw reader reads with its fence, a counter holder reads then writes, a writer writes.
    if (h.mode === "read") return this.invokeRead(c, true);
    if (this.plan.workload === "counter") return h.read === undefined ? this.invokeRead(c, this.plan.fenceReads) : this.invokeWrite(c, d);
    // A mutex's holder reads now and then too (a semaphore's and an rw writer's do not).
    if (a < 10 && (this.plan.lock === "mutex" || this.plan.lock === "reentrant")) return this.invokeRead(c, this.plan.fenceReads && a < 6);
    this.invokeWrite(c, d);
  }

  private idleMove(c: Client, s: Step, d: Dice): void {
    const a = s.act;
    if (a >= 95) return;
    const key = `k${a % this.plan.keys}`;
    if (a >= 85 && this.has("reentry-other")) return this.invokeBogus(c, key);
    const entry = `c${c.id}-h${++c.made}`;
    const fields: Record<string, unknown> = {};
    let write = true;
    if (this.plan.lock === "rw") {
      const m = d.roll("mode");
      // An acquire without mode is taken as exclusive.
      if (m < 55) fields.mode = "read";
      else if (m < 90) fields.mode = "write";
      write = fields.mode !== "read";
    }
    if (this.plan.lock === "reentrant" && d.chance("depth-1", 60)) fields.depth = 1;
    const ahead = this.service.enqueue(key, entry, this.t);
    this.invoke(c, { kind: "acquire", f: "acquire", key, at: this.t, value: { ttl_ms: this.ttl, ...fields }, entry, ahead, write });
  }

  private invoke(c: Client, p: Pending): void {
    c.pending = p;
    this.emit({ process: c.process, type: "invoke", f: p.f, key: p.key, value: p.value });
  }

  private invokeReenter(c: Client): void {
    const h = c.held!;
    this.invoke(c, { kind: "reenter", f: "acquire", key: h.key, at: this.t, value: { ttl_ms: this.ttl, depth: h.fences.length + 1 } });
  }

  /** An acquire at depth 2 by a client that holds nothing (the reentry-other defect may grant it). */
  private invokeBogus(c: Client, key: string): void {
    const entry = `c${c.id}-h${++c.made}`;
    this.invoke(c, { kind: "bogus", f: "acquire", key, at: this.t, value: { ttl_ms: this.ttl, depth: 2 }, entry });
  }

  private invokeRelease(c: Client, d: Dice): void {
    const h = c.held!;
    const depth = h.fences.length;
    // The outermost release may leave its depth out.
    const withDepth = this.plan.lock === "reentrant" && (depth > 1 || d.chance("release-depth", 50));
    this.invoke(c, { kind: "release", f: "release", key: h.key, at: this.t, value: { owner: h.owner, fence: h.fences.at(-1)!, ...(withDepth ? { depth } : {}) } });
  }

  private invokeWrite(c: Client, d: Dice): void {
    const h = c.held!;
    let data: unknown = this.plan.workload === "counter" ? (h.read ?? 0) + 1 : `${h.owner}#${++h.writes}`;
    if (this.has("counter-garbage") && d.chance("garbage", 20)) data = `n/a`;
    this.invoke(c, { kind: "write", f: "write", key: h.key, at: this.t, value: { owner: h.owner, fence: h.fences.at(-1)!, data }, data });
  }

  private invokeRead(c: Client, fenced: boolean): void {
    const h = c.held!;
    this.invoke(c, { kind: "read", f: "read", key: h.key, at: this.t, value: fenced ? { owner: h.owner, fence: h.fences.at(-1)! } : {}, fenced });
  }

  /**
   * The operation's completion: the service or the resource acts, then the reply is
   * recorded. `when`: in the move that invoked it, in a later move of its client, or
   * at the run's end, when every outstanding operation is answered (none lost).
   */
  private finish(c: Client, s: Step, d: Dice, when: "at-once" | "later" | "final"): void {
    const p = c.pending!;
    const final = when === "final";
    const lost = !final && d.chance("lost", this.plan.infoRate);
    switch (p.kind) {
      case "acquire":
        this.finishAcquire(c, p, s, d, when, lost);
        break;
      case "reenter":
        this.finishReenter(c, p, d, lost);
        break;
      case "bogus":
        this.finishBogus(c, p, d, lost);
        break;
      case "renew":
        this.finishRenew(c, p, d, lost);
        break;
      case "release":
        this.finishRelease(c, p, d, lost);
        break;
      case "write":
        this.finishWrite(c, p, d, lost);
        break;
      case "read":
        this.finishRead(c, p, d, lost);
        break;
    }
    if (c.held?.told && !c.pending) c.held = null;
  }

  /**
   * A broken adapter's stray line while its client has nothing outstanding: a
   * protocol error and a new program, and no line in the history.
   */
  private stray(client: number, d: Dice): void {
    const c = this.clients[client];
    if ((this.adapter !== "bad-line" && this.adapter !== "exited") || c.pending || !d.chance("stray", 3)) return;
    this.protocolError(c, this.adapter === "bad-line" ? "stray line while idle" : "exited while idle");
  }

  private protocolError(c: Client, what: string): void {
    const code = this.adapter === "exited" ? "adapter-exited" : "adapter-bad-line";
    this.protocolErrors.push({ time: this.t, worker: `worker-${(c.id % 2) + 1}`, client: c.id, process: c.process, pid: 1000 + c.id, code, message: `adapter fuzz (client ${c.id}) ${what}; killed it` });
  }

  private complete(c: Client, type: "ok" | "fail" | "info", value?: Record<string, unknown>, error?: string): void {
    const p = c.pending!;
    // An adapter's lost reply: a timeout (an ordinary info), or the protocol error that ended its program.
    if (type === "info" && error === "timeout" && this.adapter !== "none") {
      error = `adapter-${this.adapter}`;
      if (this.adapter !== "timeout") this.protocolError(c, `broke the protocol with ${p.f} outstanding`);
    }
    this.emit({ process: c.process, type, f: p.f, key: p.key, ...(value ? { value } : {}), ...(error ? { error } : {}) });
    c.pending = null;
    if (type === "info") {
      // Retired: the client carries on under a new process, its hold abandoned to the lease.
      c.process += this.plan.clients;
      c.held = null;
    }
  }

  private finishAcquire(c: Client, p: Pending, s: Step, d: Dice, when: "at-once" | "later" | "final", lost: boolean): void {
    const final = when === "final";
    const key = p.key;
    const at = this.effectAt();
    // The service may grant the entry a withdrawn wait of this client left behind (cancel-leak).
    const regrant = c.left !== null && c.left.key === key && this.service.isLeft(key, c.left.owner, at) &&
      this.service.free(key, p.write!, at, true) && d.chance("regrant", 60);
    const free = regrant || this.service.free(key, p.write!, at);
    const grantable = free || this.service.grantsAnyway(d);
    // The entry it waited behind, where its client tells; never its own (a regranted entry may have been ahead of it).
    const behind = (owner = p.entry): Record<string, unknown> =>
      this.plan.reportsBehind && p.ahead && p.ahead !== p.entry && p.ahead !== owner && d.chance("behind", 80) ? { behind: p.ahead } : {};

    // A waiter is withdrawn in a later move, never the one that invoked it.
    const cancel = this.plan.cancels && when === "later" && s.act >= 60 && s.act < 88;
    if (cancel && !(grantable && d.chance("cancel-late", 25))) {
      if (d.chance("cancel-sure", 70)) {
        // The service certainly removed the waiter; a broken one keeps its entry, which stalls the queue.
        if (this.has("cancel-leak") && d.chance("leak", 70)) {
          this.service.leave(key, p.entry!, at + this.ttl * MS * d.between("leak-for", 1, 6));
          c.left = { key, owner: p.entry! };
        } else this.service.dequeue(key, p.entry!);
        return this.complete(c, "fail", { owner: p.entry!, ...behind() }, "cancelled");
      }
      // Nobody knows whether the waiter is gone: its entry may stand until its session's lease runs out.
      if (d.chance("linger", 50)) this.service.leave(key, p.entry!, at + this.ttl * MS);
      else this.service.dequeue(key, p.entry!);
      return this.complete(c, "info", undefined, "cancel-unknown");
    }
    if (lost) {
      // The reply was lost; the grant may have been made, a hold nobody knows of until its lease runs out.
      if (grantable && d.chance("ghost", 50)) this.service.grant(key, { owner: p.entry!, client: c.id, write: p.write!, leaseEnd: at + this.ttl * MS, depth: 1, fences: [null] }, at);
      else this.service.dequeue(key, p.entry!);
      return this.complete(c, "info", undefined, "timeout");
    }
    if (!grantable) {
      // A waiter gives up after a few leases (its acquire timeout).
      if (!final && this.t - p.at < 5 * this.ttl * MS && d.chance("wait", 65)) return;
      this.service.dequeue(key, p.entry!);
      const error = this.has("orphan-node") && d.chance("orphan", 30) ? "orphan-node" : d.chance("busy", 50) ? "busy" : "timeout";
      return this.complete(c, "fail", Object.keys(behind()).length ? behind() : undefined, error);
    }
    const reused = this.has("owner-reuse") && c.made > 1 && d.chance("reuse", 25) ? `c${c.id}-h${d.between("which", 1, c.made - 1)}` : null;
    const owner = regrant ? c.left!.owner : (reused ?? p.entry!);
    const fence = this.service.fence(key, c.id, d);
    const ttl = d.chance("short-ttl", 15) ? Math.max(1, Math.round(this.ttl / 2)) : this.ttl;
    const extra: Record<string, unknown> = {};
    if (this.plan.reportsValidity) {
      // What was left of the lease by the client's count, as Redlock computes it.
      const validity = Math.round((ttl - (this.t - p.at) / MS - d.between("drift", 0, 2)) * 1000) / 1000;
      if (validity <= 0 && !this.has("expired-on-arrival")) {
        // A careful client gives the lock back and fails the acquire.
        this.service.dequeue(key, p.entry!);
        return this.complete(c, "fail", undefined, "expired");
      }
      extra.validity_ms = validity;
    }
    if (this.plan.reportsQueued) extra.queued_ms = Math.round(((this.t - p.at) / MS) * d.between("queued", 10, 90)) / 100;
    this.service.grant(key, { owner, client: c.id, write: p.write!, leaseEnd: at + ttl * MS, depth: 1, fences: [fence] }, at);
    if (regrant) {
      this.service.takeLeft(key, owner);
      this.service.dequeue(key, p.entry!);
      c.left = null;
    }
    const asked = { ...(p.value.mode !== undefined ? { mode: p.value.mode } : {}), ...(p.value.depth !== undefined ? { depth: p.value.depth } : {}) };
    this.complete(c, "ok", { owner, fence, ttl_ms: ttl, ...asked, ...extra, ...behind(owner) });
    c.held = { key, owner, fences: [fence], writes: 0, doomed: false, told: false, bogus: false, ...(p.value.mode === "read" || p.value.mode === "write" ? { mode: p.value.mode } : {}) };
  }

  /** The fence a re-entry gets: its client's promise (the header's fence_on_reentry), broken by the reentry-fence defect. */
  private reentryFence(h: Held, client: number, d: Dice): number | null {
    const promise = this.plan.fenceOnReentry ?? (d.chance("reentry-new", 50) ? "new" : "same");
    const broken = this.has("reentry-fence") && d.chance("reentry-fence", 50);
    const fresh = (promise === "new") !== broken;
    if (!fresh) return broken ? h.fences.at(-1)! : h.fences[0];
    return this.service.fence(h.key, client, d) ?? h.fences[0];
  }

  private finishReenter(c: Client, p: Pending, d: Dice, lost: boolean): void {
    const h = c.held!;
    const at = this.effectAt();
    const fence = this.reentryFence(h, c.id, d);
    const g = lost && d.chance("reentry-effect", 50) ? null : this.service.reenter(h.key, h.owner, this.ttl, at, fence);
    if (lost) return this.complete(c, "info", undefined, "timeout");
    if (!g) {
      h.doomed = true;
      return this.complete(c, "fail", undefined, "not-owner");
    }
    h.fences.push(fence);
    this.complete(c, "ok", { owner: h.owner, fence, ttl_ms: this.ttl, depth: h.fences.length });
  }

  /**
   * The reentry-other defect: a depth-2 acquire of a client that holds nothing is
   * granted, as a re-entry of another process's hold (the owner of the hold the key
   * has) or of no hold at all (an owner nobody was granted at depth 1).
   */
  private finishBogus(c: Client, p: Pending, d: Dice, lost: boolean): void {
    if (lost) return this.complete(c, "info", undefined, "timeout");
    const at = this.effectAt();
    if (!d.chance("reentry-other", 70)) return this.complete(c, "fail", undefined, "not-owner");
    const holder = this.service.live(p.key, at).find((g) => g.client !== c.id);
    let owner: string;
    let fence: number | null;
    if (holder && d.chance("whose", 60)) {
      owner = holder.owner;
      fence = holder.fences.at(-1)!;
      // The service counts it as the holder's re-entry.
      holder.depth++;
      holder.fences.push(fence);
    } else {
      owner = p.entry!;
      fence = this.service.fence(p.key, c.id, d);
      this.service.grant(p.key, { owner, client: c.id, write: true, leaseEnd: at + this.ttl * MS, depth: 1, fences: [fence] }, at);
    }
    this.complete(c, "ok", { owner, fence, ttl_ms: this.ttl, depth: 2 });
    c.held = { key: p.key, owner, fences: [fence, fence], writes: 0, doomed: false, told: false, bogus: true };
  }

  private finishRenew(c: Client, p: Pending, d: Dice, lost: boolean): void {
    const h = c.held!;
    const at = this.effectAt();
    if (lost) {
      if (d.chance("renew-effect", 50)) this.service.renew(h.key, h.owner, h.fences[0], c.id, this.ttl, at, d);
      return this.complete(c, "info", undefined, "timeout");
    }
    if (this.service.renew(h.key, h.owner, h.fences[0], c.id, this.ttl, at, d)) return this.complete(c, "ok", { ttl_ms: this.ttl });
    h.doomed = true;
    this.complete(c, "fail", undefined, "not-owner");
  }

  private finishRelease(c: Client, p: Pending, d: Dice, lost: boolean): void {
    const h = c.held!;
    const depth = h.fences.length;
    const at = this.effectAt();
    if (lost) {
      if (d.chance("release-effect", 50)) this.service.release(h.key, h.owner, depth, at, d);
      return this.complete(c, "info", undefined, "timeout");
    }
    const released = this.service.release(h.key, h.owner, depth, at, d);
    if (!released && d.chance("release-fails", 40)) this.complete(c, "fail", undefined, "not-owner");
    else this.complete(c, "ok", { released });
    if (depth > 1) {
      h.fences.pop();
      if (h.bogus) c.held = null;
    } else c.held = null;
  }

  private finishWrite(c: Client, p: Pending, d: Dice, lost: boolean): void {
    const h = c.held!;
    const at = this.effectAt();
    const fence = p.value.fence as number | null;
    if (lost) {
      this.lostWrite(c, h, fence, p.data, at, d);
      return this.complete(c, "info", undefined, "timeout");
    }
    const o = this.resource.write(at, h.key, c.process, h.owner, fence, p.data, d);
    if (this.plan.workload === "counter") {
      h.read = undefined;
      h.doomed = true;
    }
    if (o.accepted) return this.complete(c, "ok", { owner: h.owner, fence, data: p.data });
    this.complete(c, "fail", { owner: h.owner, fence, seen: o.maxBefore }, fence === null && this.plan.fencing ? "no-fence" : "stale-fence");
  }

  /** A write whose reply was lost: decided now, decided later (still on its way), or never; in a database, perhaps lost during the commit. */
  private lostWrite(c: Client, h: Held, fence: number | null, data: unknown, at: number, d: Dice): void {
    const fate = d.roll("write-fate");
    if (this.resource.committed && fate < 50) return this.resource.lostCommit(at, h.key, c.process, h.owner, fence, data, d, d.chance("took-effect", 50));
    if (fate < 70) {
      this.resource.write(at, h.key, c.process, h.owner, fence, data, d);
      return;
    }
    if (fate < 90 && !this.resource.committed) this.inflight.push({ key: h.key, process: c.process, owner: h.owner, fence, data });
  }

  private finishRead(c: Client, p: Pending, d: Dice, lost: boolean): void {
    const h = c.held!;
    const at = this.effectAt();
    const fence = p.fenced ? h.fences.at(-1)! : null;
    if (lost) {
      // Answered and the answer lost (a committed read's line is then not logged), or never arrived.
      if (d.chance("read-effect", 50)) this.resource.read(at, h.key, c.process, h.owner, fence, d, !this.resource.committed);
      return this.complete(c, "info", undefined, "timeout");
    }
    const o = this.resource.read(at, h.key, c.process, h.owner, fence, d);
    if (!o.accepted) {
      h.doomed = true;
      return this.complete(c, "fail", { owner: h.owner, fence, seen: o.maxBefore }, "stale-fence");
    }
    if (this.plan.workload === "counter") {
      // A key never written reads as 0.
      const value = typeof o.data === "number" ? o.data : 0;
      h.read = value;
      return this.complete(c, "ok", { data: o.data === null ? 0 : o.data, fence: o.fence });
    }
    this.complete(c, "ok", { data: o.data, fence: o.fence });
  }
}

export function header(plan: Plan, id: string): HistoryHeader {
  const h: HistoryHeader = { format: plan.format, kind: "header", run: `fuzz-${plan.workload}/${id}`, workload: plan.workload, backend: "fuzz", fencing: plan.fencing };
  if (plan.format === 2) {
    if (plan.lockInHeader) h.lock = plan.lock;
    if (plan.lock === "semaphore") h.permits = plan.permits;
    if (plan.fenceOnReentry !== null) h.fence_on_reentry = plan.fenceOnReentry;
    h.client = "fuzz";
  }
  return h;
}

/** The run a Plan makes: its history and resource log, in the files' order. */
export function execute(plan: Plan, id = "case"): Execution {
  const r = new Recorder(plan);
  r.play();
  return { header: header(plan, id), events: r.events, decisions: plan.resource === "none" ? null : r.resource.file(), protocolErrors: r.protocolErrors, end: r.end };
}
