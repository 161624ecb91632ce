// What each toxic does to the bytes of one direction of one connection. A link
// (link.ts) is a chain of stages, one per toxic, in the order the toxics were
// added, as Toxiproxy chains a stub per toxic. A stage gets chunks and the end of
// its input, and hands chunks on, ends its output, or resets the connection
// through its context.
//
// Semantics follow Toxiproxy's toxics/*.go; the code is our own. Where Toxiproxy's
// behaviour is a side effect of goroutines and channels (a blocked stub stops
// reading) we drop or hold data instead and say which. Where its loop and its
// documentation disagree (timeout, reset_peer) we follow the loop: a run must see
// the same from our server and from a user's Toxiproxy, and the conformance suite
// (test/proxy/conformance.test.ts) holds both to one behaviour.
import type { Toxic, LatencyAttributes, BandwidthAttributes, SlicerAttributes, TimeoutAttributes, ResetPeerAttributes, SlowCloseAttributes, LimitDataAttributes } from "./toxics.ts";

export interface Chunk {
  data: Buffer;
  /** performance.now() when the chunk was read, or when latency last released it. */
  at: number;
}

export interface StageContext {
  /** Hand a chunk to the next stage (or to the socket, after the last). */
  emit(chunk: Chunk): void;
  /** End this stage's output: later stages see the end, earlier ones' data is dropped. */
  close(): void;
  /** Abort the whole connection with a TCP RST on both sides. */
  reset(): void;
  /** Account for bytes this stage threw away, so flow control does not wait for them. */
  drop(bytes: number): void;
}

// Node timers may fire a little before performance.now() says the time has come
// (the loop's clock is cached); a chunk within this much of its time goes.
const TOLERANCE_MS = 1;

export abstract class Stage {
  private readonly timers = new Set<NodeJS.Timeout>();
  protected disposed = false;

  constructor(protected readonly ctx: StageContext) {}

  abstract push(chunk: Chunk): void;

  /** The input ended. A stage must end its output, now or later. */
  end(): void {
    this.ctx.close();
  }

  /** Hand on at once whatever is held, a pending end included, and stop waiting. */
  flush(): void {}

  /** The toxic was deleted. Most toxics let their held data through; timeout does not. */
  remove(): void {
    this.flush();
  }

  /** New attributes. Toxiproxy restarts the toxic's loop with them; so do we. */
  abstract update(toxic: Toxic): void;

  dispose(): void {
    this.disposed = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
  }

  protected after(ms: number, fn: () => void): NodeJS.Timeout {
    const t = setTimeout(() => {
      this.timers.delete(t);
      if (!this.disposed) fn();
    }, Math.max(0, ms));
    this.timers.add(t);
    return t;
  }

  protected cancel(t: NodeJS.Timeout | undefined): void {
    if (t === undefined) return;
    clearTimeout(t);
    this.timers.delete(t);
  }
}

/** A toxic that lost its toxicity roll for this connection: bytes pass untouched. */
export class PassStage extends Stage {
  push(chunk: Chunk): void {
    this.ctx.emit(chunk);
  }
  update(): void {}
}

/**
 * A queue released in order, each head at a time the subclass picks. The time is
 * committed only when the head goes, so new attributes re-plan what still waits.
 */
abstract class PacedStage extends Stage {
  private readonly queue: Chunk[] = [];
  private headDue: number | undefined;
  private timer: NodeJS.Timeout | undefined;
  private ended = false;

  /** When queue[0] may go; may cut queue[0] into a piece and a rest. */
  protected abstract dueOf(queue: Chunk[], now: number): number;
  protected released(_chunk: Chunk, _due: number): void {}

  push(chunk: Chunk): void {
    this.queue.push(chunk);
    if (this.timer === undefined) this.pump();
  }

  override end(): void {
    this.ended = true;
    if (this.timer === undefined) this.pump();
  }

  override flush(): void {
    this.cancel(this.timer);
    this.timer = undefined;
    this.headDue = undefined;
    while (this.queue.length > 0 && !this.disposed) this.ctx.emit(this.queue.shift()!);
    if (this.ended && !this.disposed) this.finish();
  }

  protected replan(): void {
    this.cancel(this.timer);
    this.timer = undefined;
    this.headDue = undefined;
    this.pump();
  }

  private finish(): void {
    this.ended = false;
    this.ctx.close();
  }

  private pump(): void {
    this.timer = undefined;
    while (!this.disposed) {
      if (this.queue.length === 0) {
        if (this.ended) this.finish();
        return;
      }
      const now = performance.now();
      this.headDue ??= this.dueOf(this.queue, now);
      if (this.headDue > now + TOLERANCE_MS) {
        this.timer = this.after(this.headDue - now, () => this.pump());
        return;
      }
      const chunk = this.queue.shift()!;
      const due = this.headDue;
      this.headDue = undefined;
      this.released(chunk, due);
      this.ctx.emit(chunk);
    }
  }
}

/** latency ± jitter ms after the chunk was read; later chunks never overtake earlier ones. */
export class LatencyStage extends PacedStage {
  private lastDue = -Infinity;
  constructor(ctx: StageContext, private attrs: LatencyAttributes) {
    super(ctx);
  }
  protected dueOf(queue: Chunk[], _now: number): number {
    const { latency, jitter } = this.attrs;
    // Toxiproxy draws uniformly from [latency - jitter, latency + jitter).
    const j = jitter > 0 ? Math.random() * 2 * jitter - jitter : 0;
    return Math.max(queue[0]!.at + Math.max(0, latency + j), this.lastDue);
  }
  protected override released(chunk: Chunk, due: number): void {
    this.lastDue = due;
    // Stacked latency toxics add up, as in Toxiproxy, which moves the timestamp on.
    chunk.at = due;
  }
  update(toxic: Toxic): void {
    if (toxic.type !== "latency") return;
    this.attrs = toxic.attributes;
    this.replan();
  }
}

/** rate KB/s (1 KB = 1000 bytes, as Toxiproxy counts), sent in pieces of at most 100 ms. */
export class BandwidthStage extends PacedStage {
  private freeAt = -Infinity;
  constructor(ctx: StageContext, private attrs: BandwidthAttributes) {
    super(ctx);
  }
  protected dueOf(queue: Chunk[], now: number): number {
    const rate = this.attrs.rate; // bytes per ms
    if (rate <= 0) return now;
    const head = queue[0]!;
    const piece = Math.max(1, Math.floor(rate * 100));
    if (head.data.length > piece) {
      queue.splice(0, 1, { data: head.data.subarray(0, piece), at: head.at }, { data: head.data.subarray(piece), at: head.at });
    }
    // No credit for idle time: a quiet link does not earn a burst (nor does Toxiproxy's).
    return Math.max(now, this.freeAt) + queue[0]!.data.length / rate;
  }
  protected override released(_chunk: Chunk, due: number): void {
    this.freeAt = due;
  }
  update(toxic: Toxic): void {
    if (toxic.type !== "bandwidth") return;
    this.attrs = toxic.attributes;
    this.replan();
  }
}

/** Cuts chunks into pieces of average_size ± size_variation bytes, delay µs apart. */
export class SlicerStage extends PacedStage {
  private nextAt = -Infinity;
  constructor(ctx: StageContext, private attrs: SlicerAttributes) {
    super(ctx);
  }
  protected dueOf(queue: Chunk[], now: number): number {
    const { average_size: avg, size_variation: variation } = this.attrs;
    const head = queue[0]!;
    if (avg > 0 && head.data.length > avg + Math.max(0, variation)) {
      const v = Math.max(0, Math.floor(variation));
      const size = Math.max(1, Math.floor(avg) + Math.floor(Math.random() * (2 * v + 1)) - v);
      if (size < head.data.length) {
        queue.splice(0, 1, { data: head.data.subarray(0, size), at: head.at }, { data: head.data.subarray(size), at: head.at });
      }
    }
    return Math.max(now, this.nextAt);
  }
  protected override released(_chunk: Chunk, due: number): void {
    this.nextAt = due + Math.max(0, this.attrs.delay) / 1000;
  }
  update(toxic: Toxic): void {
    if (toxic.type !== "slicer") return;
    this.attrs = toxic.attributes;
    this.replan();
  }
}

/**
 * Lets nothing through (the data is dropped, as Toxiproxy drops it) and ends the
 * output once `timeout` ms pass without a chunk; never when 0. Toxiproxy's loop
 * arms its timer anew with every chunk, so a chatty client is never closed: its
 * documentation's "after a timeout" is of silence. Deleting the toxic ends the
 * output, as Toxiproxy's Cleanup does, so a healed black hole closes its
 * connections rather than resuming a stream with a hole in it.
 */
export class TimeoutStage extends Stage {
  private timer: NodeJS.Timeout | undefined;
  constructor(ctx: StageContext, private attrs: TimeoutAttributes) {
    super(ctx);
    this.arm();
  }
  private arm(): void {
    this.cancel(this.timer);
    this.timer = this.attrs.timeout > 0 ? this.after(this.attrs.timeout, () => this.ctx.close()) : undefined;
  }
  push(chunk: Chunk): void {
    this.ctx.drop(chunk.data.length);
    this.arm();
  }
  override flush(): void {
    this.cancel(this.timer);
    this.timer = undefined;
  }
  override remove(): void {
    this.flush();
    this.ctx.close();
  }
  update(toxic: Toxic): void {
    if (toxic.type !== "timeout") return;
    this.attrs = toxic.attributes;
    this.arm();
  }
}

/**
 * Resets the connection (RST on both sides) `timeout` ms after the first chunk
 * that reaches it, which it swallows, as Toxiproxy's loop does: an idle
 * connection is left alone until it is used. Once started, the reset comes
 * whatever happens to the toxic (Toxiproxy's loop waits out the timeout without
 * listening for the toxic's removal).
 */
export class ResetPeerStage extends Stage {
  private triggered = false;
  constructor(ctx: StageContext, private attrs: ResetPeerAttributes) {
    super(ctx);
  }
  push(chunk: Chunk): void {
    this.ctx.drop(chunk.data.length);
    if (this.triggered) return;
    this.triggered = true;
    // Not this.after: a removal or an update disposes of the stage's timers, and must not spare the connection.
    setTimeout(() => this.ctx.reset(), this.attrs.timeout);
  }
  update(toxic: Toxic): void {
    if (toxic.type !== "reset_peer") return;
    this.attrs = toxic.attributes;
  }
}

/** Passes data; holds the end for `delay` ms. */
export class SlowCloseStage extends Stage {
  private timer: NodeJS.Timeout | undefined;
  constructor(ctx: StageContext, private attrs: SlowCloseAttributes) {
    super(ctx);
  }
  push(chunk: Chunk): void {
    this.ctx.emit(chunk);
  }
  override end(): void {
    this.timer = this.after(this.attrs.delay, () => this.ctx.close());
  }
  override flush(): void {
    if (this.timer === undefined) return;
    this.cancel(this.timer);
    this.timer = undefined;
    this.ctx.close();
  }
  update(toxic: Toxic): void {
    if (toxic.type === "slow_close") this.attrs = toxic.attributes;
  }
}

/** Passes `bytes` bytes in all, then ends the output. The count survives updates. */
export class LimitDataStage extends Stage {
  private sent = 0;
  constructor(ctx: StageContext, private attrs: LimitDataAttributes) {
    super(ctx);
  }
  push(chunk: Chunk): void {
    const remaining = Math.max(0, this.attrs.bytes - this.sent);
    const pass = Math.min(remaining, chunk.data.length);
    if (pass > 0) {
      this.sent += pass;
      this.ctx.emit(pass === chunk.data.length ? chunk : { data: chunk.data.subarray(0, pass), at: chunk.at });
    }
    if (pass < chunk.data.length) this.ctx.drop(chunk.data.length - pass);
    if (this.attrs.bytes - this.sent <= 0) this.ctx.close();
  }
  update(toxic: Toxic): void {
    if (toxic.type === "limit_data") this.attrs = toxic.attributes;
  }
}

/**
 * ZooKeeper's leader election: a member that opens a connection to one with a
 * higher id first sends (protocol version < 0, its id, the length and text of its
 * own election address); the receiver drops the connection and connects back to
 * that address, which is the sender's real one, around any proxy. This rewrites
 * that first message to the old form, the sender's id alone (a version >= 0 is an
 * id to ZooKeeper 3.8, which still reads it), so the receiver connects back to the
 * sender as its own configuration lists it: through the proxy between them
 * (backends/zookeeper/peers.ts). Everything after the first message passes as is.
 */
export class ZkSidOnlyStage extends Stage {
  private head: Buffer | null = Buffer.alloc(0);
  push(chunk: Chunk): void {
    if (this.head === null) return this.ctx.emit(chunk);
    const data = Buffer.concat([this.head, chunk.data]);
    if (data.length < 8) return void (this.head = data);
    if (data.readBigInt64BE(0) >= 0n) return this.pass(data, 0, chunk.at);
    if (data.length < 20) return void (this.head = data);
    const end = 20 + data.readInt32BE(16);
    if (data.length < end) return void (this.head = data);
    this.ctx.drop(end - 8);
    this.pass(Buffer.concat([data.subarray(8, 16), data.subarray(end)]), 0, chunk.at);
  }
  private pass(data: Buffer, from: number, at: number): void {
    this.head = null;
    this.ctx.emit({ data: data.subarray(from), at });
  }
  override end(): void {
    if (this.head?.length) this.ctx.emit({ data: this.head, at: performance.now() });
    this.head = null;
    this.ctx.close();
  }
  update(): void {}
}

/** The stage that does what `toxic` says, for one link. block_from has none: it acts on connections. */
export function createStage(toxic: Toxic, ctx: StageContext): Stage {
  switch (toxic.type) {
    case "latency":
      return new LatencyStage(ctx, toxic.attributes);
    case "bandwidth":
      return new BandwidthStage(ctx, toxic.attributes);
    case "slicer":
      return new SlicerStage(ctx, toxic.attributes);
    case "timeout":
      return new TimeoutStage(ctx, toxic.attributes);
    case "reset_peer":
      return new ResetPeerStage(ctx, toxic.attributes);
    case "slow_close":
      return new SlowCloseStage(ctx, toxic.attributes);
    case "limit_data":
      return new LimitDataStage(ctx, toxic.attributes);
    case "block_from":
      return new PassStage(ctx);
    case "zk_sid_only":
      return new ZkSidOnlyStage(ctx);
  }
}
