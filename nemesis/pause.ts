// SIGSTOP for longer than the lease: the GC pause of Kleppmann's K1, for real. A
// paused worker's clients (and their renew watchdogs) stop mid-hold; a paused
// server stops answering while its keys' TTLs keep running.
import type { Fault, Nemesis, NemesisContext } from "./nemesis.ts";

/** What freezes a target: the run's process group for workers, the servers' deployment (through the cluster) for servers. */
interface Freezer {
  pause(name: string): boolean | Promise<boolean>;
  resume(name: string): unknown;
  running(name: string): boolean;
}

const freezerOf = (ctx: NemesisContext, aims: "workers" | "servers"): Freezer => (aims === "servers" ? ctx.cluster : ctx.processes);
import { aimServers, aimWorker, holderAmong, tooLate } from "./aim.ts";

/**
 * `keepOne`: never freeze the last running target. A K1 needs someone awake to
 * take the expired lease while the holder sleeps; with every worker frozen the
 * fault shows nothing.
 */
export function pauseNemesis(name: string, aims: "workers" | "servers", pick: (ctx: NemesisContext) => string[], keepOne = false): Nemesis {
  /** Paused targets: the timer that resumes each (none: until the final heal), and when (Date.now() ms; Infinity: at the final heal). */
  const paused = new Map<string, { timer: NodeJS.Timeout | undefined; endsAt: number }>();

  const resume = async (ctx: NemesisContext, target: string): Promise<void> => {
    clearTimeout(paused.get(target)?.timer);
    paused.delete(target);
    await freezerOf(ctx, aims).resume(target);
    ctx.record("stop-pause", { targets: [target] });
  };

  const perform = async (ctx: NemesisContext, fault: Fault): Promise<void> => {
    const all = pick(ctx);
    for (const target of fault.targets) {
      if (!all.includes(target)) throw new Error(`${name}: no target named ${target} (targets: ${all.join(", ")})`);
      if (paused.has(target)) throw new Error(`${name}: ${target} is already paused`);
    }
    for (const target of fault.targets) {
      if (!(await freezerOf(ctx, aims).pause(target))) throw new Error(`${name}: ${target} is not running`);
      const ms = fault.durationMs;
      ctx.record("start-pause", { targets: [target], ...(ms === null ? {} : { duration_ms: ms }), ...fault.aim });
      paused.set(target, ms === null ? { timer: undefined, endsAt: Infinity } : { timer: setTimeout(() => void resume(ctx, target).catch(() => {}), ms), endsAt: Date.now() + ms });
    }
  };

  return {
    name,
    describe:
      name === "pause"
        ? "SIGSTOP a random worker process (its clients freeze mid-hold) for pause-min..pause-max ms, then SIGCONT"
        : "SIGSTOP a random lock server for pause-min..pause-max ms, then SIGCONT",
    async inject(ctx) {
      const all = pick(ctx);
      const candidates = all.filter((t) => !paused.has(t));
      if (candidates.length === 0 || (keepOne && candidates.length === 1 && all.length > 1)) return false;
      // holderAmong returns at once when it is too late already.
      if (aims === "workers") await holderAmong(ctx, candidates, name);
      // Too late (or it waited for a holder until then): the turn passes.
      if (tooLate(ctx)) return false;
      const { target, aim } = pickTarget(ctx, aims, candidates);
      const ms = Math.round(ctx.rng.between(ctx.options.pauseMinMs, ctx.options.pauseMaxMs));
      // A process that has gone is no fault to draw; the turn passes quietly.
      if (!freezerOf(ctx, aims).running(target)) return false;
      await perform(ctx, { targets: [target], durationMs: ms, aim });
      return true;
    },
    perform,
    async heal(ctx) {
      await Promise.all([...paused.keys()].map((target) => resume(ctx, target)));
    },
    active: () => [...paused.keys()].map((t) => `pause ${t}`),
    endsAt: () => Math.max(0, ...[...paused.values()].map((p) => p.endsAt)),
  };
}

/**
 * Whom to freeze: a worker whose client holds a lock (frozen mid-hold, it outlives
 * its lease: K1), or a server that granted one (its keys' TTLs keep running while
 * it cannot answer the holder's renew or release), when aiming at holders.
 */
export function pickTarget(ctx: Pick<NemesisContext, "rng" | "options" | "holds" | "servers">, aims: "workers" | "servers", candidates: readonly string[]): { target: string; aim: Record<string, unknown> } {
  if (aims === "servers") {
    const aimed = aimServers(ctx.rng, ctx.options.aim, ctx.holds(), ctx.servers, candidates)!;
    return { target: aimed.targets[0], aim: aimed.aim };
  }
  return aimWorker(ctx, candidates);
}
