// A nemesis schedule written in advance: each step performs one chosen fault at
// a fixed offset from the moment the clients start, through the same nemeses
// (and so the same fault code and the same history events) as the random
// schedule. The catalogue's scenarios (scenarios/) are such scripts: a fault at
// a chosen moment against a chosen target is what makes a run reproduce one
// failure every time, where a random one finds it only sometimes.
import { linkName } from "../cluster/links.ts";
import { sleep } from "../lib/index.ts";
import type { Fault, Nemesis, NemesisContext, NemesisKind } from "./nemesis.ts";
import type { Schedule } from "./schedule.ts";

export interface ScriptStep {
  /** ms after the clients start; 0 or less: in force before their first operation. */
  atMs: number;
  /** The nemesis that performs it, by its NEMESES name ("partition", "clock", "kill", ...). */
  nemesis: string;
  fault: Fault;
}

/** The nemeses a script uses, each once, in order of first use. */
export const scriptNemeses = (steps: readonly ScriptStep[]): string[] => [...new Set(steps.map((s) => s.nemesis))];

export class ScriptSchedule implements Schedule {
  private readonly steps: ScriptStep[];
  private readonly nemeses = new Map<string, { kind: NemesisKind; nemesis: Nemesis }>();
  private stopped = false;
  private current: Promise<void> = Promise.resolve();
  /** Steps that could not be performed, as messages; a scenario with one did not run as written. */
  readonly failures: string[] = [];

  constructor(
    steps: readonly ScriptStep[],
    /** The registry (NEMESES), passed in so the folder's entry can offer this class. */
    kinds: Readonly<Record<string, NemesisKind>>,
    private readonly ctx: NemesisContext,
    /** The run's clock, in ns. */
    private readonly clock: () => number,
    private readonly warn: (line: string) => void = (l) => process.stderr.write(l + "\n"),
  ) {
    // A stable sort: steps at one moment run in the order written.
    this.steps = [...steps].sort((a, b) => a.atMs - b.atMs);
    for (const name of scriptNemeses(this.steps)) {
      const kind = kinds[name];
      if (!kind) throw new Error(`script: no nemesis named ${name} (nemeses: ${Object.keys(kinds).join(", ")})`);
      this.nemeses.set(name, { kind, nemesis: kind.create() });
    }
  }

  /** Checks every step's targets, then performs the steps due before the clients start. */
  async prepare(): Promise<void> {
    for (const step of this.steps) this.check(step);
    for (const step of this.steps.filter((s) => s.atMs <= 0)) await this.perform(step);
  }

  start(startAt: number): void {
    const later = this.steps.filter((s) => s.atMs > 0);
    void (async () => {
      for (const step of later) {
        // A timer may fire a little early by the run's clock (Node's is the loop's
        // cached time, in whole ms): wait again until the moment has truly come.
        for (let waitMs = (startAt + step.atMs * 1e6 - this.clock()) / 1e6; waitMs > 0; waitMs = (startAt + step.atMs * 1e6 - this.clock()) / 1e6)
          await sleep(Math.max(1, Math.ceil(waitMs)));
        if (this.stopped) return;
        this.current = this.perform(step);
        await this.current;
      }
    })();
  }

  /** Stop performing steps, let one under way finish, and heal every fault still in force. */
  async healAll(): Promise<void> {
    this.stopped = true;
    await this.current;
    for (const [name, { nemesis: n }] of this.nemeses) await n.heal(this.ctx).catch((err) => this.warn(`${name}: heal failed: ${err?.message ?? err}`));
  }

  active(): string[] {
    return [...this.nemeses.values()].flatMap(({ nemesis: n }) => n.active());
  }

  private async perform(step: ScriptStep): Promise<void> {
    try {
      await this.nemeses.get(step.nemesis)!.nemesis.perform(this.ctx, step.fault);
    } catch (err) {
      const message = `script: ${step.nemesis} at ${step.atMs} ms on ${step.fault.targets.join(", ")}: ${err instanceof Error ? err.message : String(err)}`;
      this.failures.push(message);
      this.warn(message);
    }
  }

  /** A script naming a target the run does not have is a mistake in the script: say so before anything starts. */
  private check(step: ScriptStep): void {
    const { ctx } = this;
    const kind = this.nemeses.get(step.nemesis)!.kind;
    const aims = kind.aimsAt?.(ctx.options) ?? kind.aims;
    const names = aims === "workers" ? ctx.workers : aims === "servers" ? ctx.servers : (ctx.links?.all.map(linkName) ?? []);
    for (const t of step.fault.targets)
      if (!names.includes(t)) throw new Error(`script: ${step.nemesis} at ${step.atMs} ms names ${t}, which this run does not have (its ${aims}: ${names.join(", ")})`);
  }
}
