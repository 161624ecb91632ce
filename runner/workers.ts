// Starting worker processes and talking to them.
import { dirname, join } from "node:path";
import { mkdirSync } from "node:fs";
import { entryArgs } from "../lib/index.ts";
import { faketimeEnv, writeOffset } from "../cluster/faketime.ts";
import { INIT_TIMEOUT_MS } from "../clients/program/index.ts";
import type { ProcessGroup, Supervised } from "../cluster/processes.ts";
import type { EventLoopDelay, FromWorker, ToWorker, WorkerConfig } from "./protocol.ts";
import type { UnindexedEvent } from "../store/events.ts";
import type { ProtocolError } from "../store/protocol-errors.ts";
import type { MetricsSnapshot } from "../workloads/index.ts";

export class WorkerHandle {
  readonly done: Promise<void>;
  /** What the worker said of its event loop when its clients were done (null: it never said). */
  eventLoopDelayMs: EventLoopDelay | null = null;
  /** The worker's metrics as it last sent them (with --metrics-port), kept after it exits: what it counted happened. */
  metrics: MetricsSnapshot | null = null;
  private markDone!: () => void;
  private readyWaiters: Array<{ resolve: () => void; reject: (e: Error) => void }> = [];

  constructor(readonly proc: Supervised, onEvents: (events: UnindexedEvent[]) => void, opts: Pick<SpawnWorkerOptions, "onWarning" | "onProtocolError"> = {}) {
    this.done = new Promise((resolve) => (this.markDone = resolve));
    proc.child.on("message", (m: FromWorker) => {
      if (m.type === "events") onEvents(m.events);
      else if (m.type === "metrics") this.metrics = m.metrics;
      else if (m.type === "warning") opts.onWarning?.(m.message);
      else if (m.type === "protocol-error") opts.onProtocolError?.(m.error);
      else if (m.type === "ready") this.readyWaiters.splice(0).forEach((w) => w.resolve());
      else if (m.type === "done") {
        this.eventLoopDelayMs = m.eventLoopDelayMs ?? null;
        this.markDone();
      }
      else if (m.type === "error") this.readyWaiters.splice(0).forEach((w) => w.reject(new Error(`${proc.name}: ${m.message}`)));
    });
    // A worker that dies has nothing more to say; its open operations stay open
    // and count as unknown, which is what they are.
    proc.exited.then(() => {
      this.markDone();
      this.readyWaiters.splice(0).forEach((w) => w.reject(new Error(`${proc.name} exited during setup (see logs/${proc.name}.log)`)));
    });
  }

  get name(): string {
    return this.proc.name;
  }

  send(m: ToWorker): void {
    if (this.proc.alive && this.proc.child.connected) this.proc.child.send(m);
  }

  // Long enough for adapter programs to start (a JVM each) and answer init, with time to spare for the rest.
  setup(config: WorkerConfig, timeoutMs = INIT_TIMEOUT_MS + 15_000): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${this.name} was not ready within ${timeoutMs / 1000} s`)), timeoutMs);
      this.readyWaiters.push({
        resolve: () => (clearTimeout(timer), resolve()),
        reject: (e) => (clearTimeout(timer), reject(e)),
      });
      this.send({ type: "setup", config });
    });
  }
}

/**
 * Where a worker started under libfaketime reads its wall clock's offset
 * (--clock-target clients): beside the servers' own (backends/redis/server.ts), so the
 * run's teardown removes it with them unless --keep-data.
 */
export const workerClockFile = (runDir: string, name: string): string => join(runDir, "data", name, "faketime");

export interface SpawnWorkerOptions {
  onWarning?: (message: string) => void;
  /** An adapter program of its broke the protocol: the runner records it in the run directory, as it does the history. */
  onProtocolError?: (e: ProtocolError) => void;
  /**
   * Start it under libfaketime with its wall clock at true time, moved later by
   * writeOffset on workerClockFile. Only the wall clock: the run's clock, which
   * stamps its events, is the monotonic one (store/clock.ts). Its adapter
   * programs inherit the environment, and with it the preload and the file.
   */
  skewableClock?: boolean;
}

export async function spawnWorker(group: ProcessGroup, name: string, runDir: string, onEvents: (events: UnindexedEvent[]) => void, opts: SpawnWorkerOptions = {}): Promise<WorkerHandle> {
  let env: NodeJS.ProcessEnv | undefined;
  if (opts.skewableClock) {
    const file = workerClockFile(runDir, name);
    mkdirSync(dirname(file), { recursive: true });
    writeOffset(file, 0);
    env = faketimeEnv(file);
  }
  const proc = await group.spawn({
    name,
    command: process.execPath,
    // The run directory in the arguments lets anyone find a run's processes with pgrep -f.
    args: [...entryArgs("runner/worker"), runDir],
    logFile: join(runDir, "logs", `${name}.log`),
    ...(env ? { env } : {}),
    ipc: true,
    // Its adapter programs are in its process group: paused, killed and reaped with it.
    group: true,
  });
  return new WorkerHandle(proc, onEvents, opts);
}
