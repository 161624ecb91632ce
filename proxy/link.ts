// One direction of one proxied connection: bytes read from `source` pass through a
// chain of stages, one per toxic of that direction, and are written to `dest`.
// This is Toxiproxy's ToxicLink. Toxics added later join at the end of the chain
// of every open link; a deleted toxic hands on what it held and leaves the chain.
//
// Flow control: the link counts bytes read but not yet written or dropped. Past a
// high-water mark, or while `dest` asks to drain, it stops reading `source`, so a
// slow toxic or a slow reader pushes back on the writer instead of growing memory.
import type { Socket } from "node:net";
import { createStage, PassStage, type Chunk, type Stage, type StageContext } from "./stages.ts";
import type { Stream, Toxic } from "./toxics.ts";

const HIGH_WATER = 1 << 20;
const LOW_WATER = 256 << 10;

interface Node {
  /** null once the toxic was deleted but the node stays as the closed end it had become. */
  name: string | null;
  stage: Stage;
  active: boolean;
  outputClosed: boolean;
}

export interface LinkHooks {
  /**
   * Takes every chunk read from the source instead of the chain, which then gets
   * only what the hook admit()s (the connection reads HTTP request heads first).
   */
  intercept?(data: Buffer): void;
  /** With intercept: the source ended; the hook calls admitEnd() when it is done. */
  interceptEnd?(): void;
  /** A stage asked for a reset. */
  reset(): void;
}

export class Link {
  private readonly nodes: Node[] = [];
  private read = 0;
  private done = 0;
  private paused = false;
  private inputEnded = false;
  private endAdmitted = false;
  private sinkEnded = false;
  private disposed = false;

  constructor(
    readonly stream: Stream,
    private readonly source: Socket,
    private readonly dest: Socket,
    toxics: readonly Toxic[],
    private readonly hooks: LinkHooks,
  ) {
    for (const t of toxics) this.addToxic(t);
    source.on("data", (data: Buffer) => this.onData(data));
    const ended = (): void => this.onEnd();
    source.on("end", ended);
    source.on("close", ended);
    source.on("error", ended);
    dest.on("drain", () => this.flow());
    // A write error: the peer is gone. Toxiproxy closes the destination and gives up the link.
    dest.on("error", () => dest.destroy());
  }

  // ---- toxics -------------------------------------------------------------

  addToxic(toxic: Toxic): void {
    // The stage needs a context that knows its node, so the node comes first.
    const node = { name: toxic.name, active: false, outputClosed: false } as Node;
    this.nodes.push(node);
    this.install(node, toxic);
    // A toxic added after the input ended sees the end at once, as a new stub in
    // Toxiproxy reads the closed channel.
    const before = this.nodes[this.nodes.length - 2];
    if ((before ? before.outputClosed : this.endAdmitted) && !this.disposed) node.stage.end();
  }

  updateToxic(toxic: Toxic): void {
    const node = this.find(toxic.name);
    if (!node || node.outputClosed) return;
    // Toxiproxy rolls the toxicity again whenever it restarts a toxic; an update restarts it.
    const active = roll(toxic.toxicity);
    if (active && node.active) {
      node.stage.update(toxic);
      return;
    }
    const old = node.stage;
    old.flush();
    old.dispose();
    if (!node.outputClosed) this.install(node, toxic, active);
  }

  removeToxic(name: string): void {
    const node = this.find(name);
    if (!node) return;
    if (!node.outputClosed) node.stage.remove();
    if (node.outputClosed) {
      // It ended the stream; what comes from before it must still go nowhere.
      node.name = null;
      node.stage.dispose();
      return;
    }
    node.stage.dispose();
    this.nodes.splice(this.nodes.indexOf(node), 1);
  }

  private find(name: string): Node | undefined {
    return this.nodes.find((n) => n.name === name);
  }

  private install(node: Node, toxic: Toxic, active = roll(toxic.toxicity)): void {
    node.active = active;
    node.stage = active ? createStage(toxic, this.contextFor(node)) : new PassStage(this.contextFor(node));
  }

  private contextFor(node: Node): StageContext {
    return {
      emit: (chunk) => {
        if (node.outputClosed || !this.nodes.includes(node)) return this.dropped(chunk.data.length);
        this.deliver(this.nodes.indexOf(node) + 1, chunk);
      },
      close: () => {
        if (node.outputClosed || !this.nodes.includes(node)) return;
        node.outputClosed = true;
        this.endFrom(this.nodes.indexOf(node) + 1);
      },
      reset: () => this.hooks.reset(),
      drop: (bytes) => this.dropped(bytes),
    };
  }

  // ---- data path ------------------------------------------------------------

  /** Give a chunk to the node at `index`, or to the socket past the last. */
  private deliver(index: number, chunk: Chunk): void {
    if (this.disposed) return;
    const next = this.nodes[index];
    if (next === undefined) return this.write(chunk);
    // A stage that ended its output reads nothing more; what reaches it is lost.
    if (next.outputClosed) return this.dropped(chunk.data.length);
    next.stage.push(chunk);
  }

  private endFrom(index: number): void {
    if (this.disposed) return;
    const next = this.nodes[index];
    if (next === undefined) return this.endSink();
    if (!next.outputClosed) next.stage.end();
  }

  private write(chunk: Chunk): void {
    this.done += chunk.data.length;
    if (!this.sinkEnded && !this.dest.destroyed && !this.dest.writableEnded) this.dest.write(chunk.data);
    this.flow();
  }

  private dropped(bytes: number): void {
    this.done += bytes;
    this.flow();
  }

  private endSink(): void {
    if (this.sinkEnded) return;
    this.sinkEnded = true;
    // Toxiproxy closes the whole destination socket when a link ends, not just its
    // write half; the other link then sees its source close and winds down too.
    if (this.dest.destroyed) return;
    this.dest.end(() => this.dest.destroy());
  }

  private onData(data: Buffer): void {
    if (this.disposed || this.inputEnded) return;
    this.read += data.length;
    if (this.hooks.intercept) this.hooks.intercept(data);
    else this.admit(data);
    this.flow();
  }

  private onEnd(): void {
    if (this.inputEnded || this.disposed) return;
    this.inputEnded = true;
    if (this.hooks.interceptEnd) this.hooks.interceptEnd();
    else this.admitEnd();
  }

  /** Let bytes read from the source into the chain. */
  admit(data: Buffer): void {
    this.deliver(0, { data, at: performance.now() });
    this.flow();
  }

  /** Let the end of the source into the chain, after everything admitted. */
  admitEnd(): void {
    if (this.endAdmitted) return;
    this.endAdmitted = true;
    this.endFrom(0);
  }

  private flow(): void {
    if (this.disposed) return;
    const pending = this.read - this.done;
    const mustWait = pending > HIGH_WATER || (this.dest.writableNeedDrain && !this.dest.destroyed);
    if (mustWait && !this.paused) {
      this.paused = true;
      this.source.pause();
    } else if (!mustWait && this.paused && pending <= LOW_WATER) {
      this.paused = false;
      this.source.resume();
    }
  }

  /** Start reading (sockets are accepted paused so no byte slips past the chain). */
  start(): void {
    if (!this.paused) this.source.resume();
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    for (const n of this.nodes) n.stage.dispose();
  }
}

function roll(toxicity: number): boolean {
  return Math.random() < toxicity;
}
