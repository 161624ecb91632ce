// SIGSTOP for longer than the lease: the GC pause of Kleppmann's K1, for real. A
// paused worker's clients (and their renew watchdogs) stop mid-hold; a paused
// server stops answering while its keys' TTLs keep running.
import type { Nemesis, NemesisContext } from "./nemesis.ts";

/**
 * `keepOne`: never freeze the last running target. A K1 needs someone awake to
 * take the expired lease while the holder sleeps; with every worker frozen the
 * fault shows nothing.
 */
export function pauseNemesis(name: string, pick: (ctx: NemesisContext) => string[], keepOne = false): Nemesis {
  const timers = new Map<string, NodeJS.Timeout>();

  const resume = (ctx: NemesisContext, target: string): void => {
    clearTimeout(timers.get(target));
    timers.delete(target);
    ctx.processes.resume(target);
    ctx.record("stop-pause", { targets: [target] });
  };

  return {
    name,
    describe:
      name === "pause"
        ? "SIGSTOP a random worker process (its clients freeze mid-hold) for pause-min..pause-max ms, then SIGCONT"
        : "SIGSTOP a random lock server for pause-min..pause-max ms, then SIGCONT",
    async inject(ctx) {
      const all = pick(ctx);
      const candidates = all.filter((t) => !timers.has(t));
      if (candidates.length === 0 || (keepOne && candidates.length === 1 && all.length > 1)) return;
      // Aim at a holder when asked to and there is one: the fault that matters.
      const holders = name === "pause" && ctx.options.pauseTarget === "holder" ? candidates.filter((t) => ctx.holders().includes(t)) : [];
      const target = ctx.rng.pick(holders.length ? holders : candidates);
      const ms = Math.round(ctx.rng.between(ctx.options.pauseMinMs, ctx.options.pauseMaxMs));
      if (!ctx.processes.pause(target)) return;
      ctx.record("start-pause", { targets: [target], duration_ms: ms });
      timers.set(target, setTimeout(() => resume(ctx, target), ms));
    },
    async heal(ctx) {
      for (const target of [...timers.keys()]) resume(ctx, target);
    },
    active: () => [...timers.keys()].map((t) => `pause ${t}`),
  };
}
