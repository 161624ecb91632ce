// Clock faults on lock servers (Jepsen's clock nemesis): a node's wall clock
// jumps by --clock-offset ms, forward or back (bump), or flips between that
// offset and true time every --strobe-period ms (strobe), for a random time in
// --fault-min..--fault-max, then is reset. A lease is a promise about time: a
// server whose clock jumps forward expires its keys early, which is how Redlock
// lets two clients hold a majority at once (K3); one whose clock goes back keeps
// them too long.
import type { ClockMode, Fault, Nemesis, NemesisContext } from "./nemesis.ts";
import { aimServers } from "./aim.ts";

export const CLOCK_MODES: readonly ClockMode[] = ["bump", "strobe"];

interface Skew {
  /** Resets it; none: it lasts until the final heal. */
  timer: NodeJS.Timeout | undefined;
  strobe: NodeJS.Timeout | null;
  mode: ClockMode;
  offsetMs: number;
}

export function clockNemesis(): Nemesis {
  const skews = new Map<string, Skew>();
  /** Set by the final heal: a skew that was under way when it came is undone at once. */
  let healed = false;

  const skew = (ctx: NemesisContext) => {
    const cluster = ctx.cluster;
    // buildTest refuses --nemesis clock for a backend without the ability.
    if (!cluster.skewClock) throw new Error("this backend's servers cannot have their clocks moved");
    return (name: string, offsetMs: number) => cluster.skewClock!(name, offsetMs);
  };

  const reset = async (ctx: NemesisContext, target: string): Promise<void> => {
    const s = skews.get(target);
    if (!s) return;
    skews.delete(target);
    clearTimeout(s.timer);
    if (s.strobe) clearInterval(s.strobe);
    await skew(ctx)(target, 0);
    ctx.record("reset-clock", { targets: [target] });
  };

  const perform = async (ctx: NemesisContext, fault: Fault): Promise<void> => {
    const move = skew(ctx);
    if (healed) return;
    const { durationMs } = fault;
    const mode = fault.mode ?? "bump";
    const offsetMs = fault.offsetMs;
    if (offsetMs === undefined) throw new Error("clock: a clock fault needs offsetMs");
    for (const target of fault.targets) {
      if (!ctx.servers.includes(target)) throw new Error(`clock: no server named ${target} (servers: ${ctx.servers.join(", ")})`);
      if (skews.has(target)) throw new Error(`clock: ${target}'s clock is already moved`);
    }
    for (const target of fault.targets) {
      await move(target, offsetMs);
      const timer = durationMs === null ? undefined : setTimeout(() => void reset(ctx, target).catch(warn(target)), durationMs);
      const s: Skew = { mode, offsetMs, strobe: null, timer };
      skews.set(target, s);
      const value: Record<string, unknown> = { mode, targets: [target], offset_ms: offsetMs, ...fault.aim };
      if (mode === "strobe") {
        const periodMs = fault.periodMs ?? ctx.options.strobePeriodMs;
        let skewed = true;
        s.strobe = setInterval(() => {
          skewed = !skewed;
          void move(target, skewed ? offsetMs : 0).catch(warn(target));
        }, periodMs);
        value.period_ms = periodMs;
      }
      if (durationMs !== null) value.duration_ms = durationMs;
      ctx.record("bump-clock", value);
      if (healed) await reset(ctx, target);
    }
  };

  return {
    name: "clock",
    describe: "bump a lock server's wall clock by +-clock-offset ms, or strobe it, for fault-min..fault-max ms, then reset it (with --aim holder: forward, on enough nodes that granted a lock held now to leave it short of a majority)",
    async inject(ctx) {
      skew(ctx);
      if (healed) return;
      const aimed = aimServers(ctx.rng, ctx.options.aim, ctx.holds(), ctx.servers, ctx.servers.filter((t) => !skews.has(t)), true);
      if (!aimed) return;
      const mode = ctx.rng.pick(ctx.options.clockModes);
      const sign = ctx.rng.next() < 0.5 ? -1 : 1;
      // At a hold, forward: the granting nodes expire its key early while its holder
      // still counts on it, and another client can take it there (K3). A clock set
      // back only keeps a key longer, which no holder notices.
      const offsetMs = (aimed.aim.aim === "holder" ? 1 : sign) * ctx.options.clockOffsetMs;
      const durationMs = Math.round(ctx.rng.between(ctx.options.faultMinMs, ctx.options.faultMaxMs));
      await perform(ctx, { targets: aimed.targets, mode, offsetMs, durationMs, aim: aimed.aim });
    },
    perform,
    async heal(ctx) {
      healed = true;
      for (const target of [...skews.keys()]) await reset(ctx, target);
    },
    active: () => [...skews].map(([t, s]) => `clock ${t} ${s.mode} ${s.offsetMs > 0 ? "+" : ""}${s.offsetMs} ms`),
  };
}

const warn = (target: string) => (err: unknown) =>
  process.stderr.write(`clock: could not move ${target}'s clock: ${err instanceof Error ? err.message : String(err)}\n`);
