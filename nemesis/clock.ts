// Clock faults (Jepsen's clock nemesis): a node's wall clock jumps by
// --clock-offset ms, forward or back (bump), or flips between that offset and
// true time every --strobe-period ms (strobe), for a random time in
// --fault-min..--fault-max, then is reset.
//
// On lock servers (the default): a lease is a promise about time, and a server
// whose clock jumps forward expires its keys early, which is how Redlock lets two
// clients hold a majority at once (K3); one whose clock goes back keeps them too
// long. On the clients' workers (--clock-target clients): a lease judged by the
// client's clock (a DynamoDB conditional write on `leaseUntil < :now` with the
// client's now, node-redlock's validity counted with Date.now()) is wrong by the
// jump, while the run's own clock, which stamps the history, is the monotonic one
// and does not move (store/clock.ts).
import type { ClockMode, ClockTarget, Fault, Nemesis, NemesisContext, NemesisOptions } from "./nemesis.ts";
import { aimServers, aimWorker, holderAmong } from "./aim.ts";

export const CLOCK_MODES: readonly ClockMode[] = ["bump", "strobe"];
export const CLOCK_TARGETS: readonly ClockTarget[] = ["servers", "clients"];

/** What a clock fault's targets name: servers, or with --clock-target clients the workers. */
export const clockAims = (o: Pick<NemesisOptions, "clockTarget">): "workers" | "servers" => (o.clockTarget === "clients" ? "workers" : "servers");

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
    if (clockAims(ctx.options) === "workers") {
      // buildTest starts the workers under libfaketime when the run moves their clocks.
      const move = ctx.skewWorkerClock;
      if (!move) throw new Error("this run's workers were not started under libfaketime (--clock-target clients)");
      return (name: string, offsetMs: number) => move(name, offsetMs);
    }
    const cluster = ctx.cluster;
    // buildTest refuses --nemesis clock for a backend without the ability.
    if (!cluster.skewClock) throw new Error("this backend's servers cannot have their clocks moved");
    return (name: string, offsetMs: number) => cluster.skewClock!(name, offsetMs);
  };
  const targetsOf = (ctx: NemesisContext): string[] => (clockAims(ctx.options) === "workers" ? ctx.workers : ctx.servers);

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
    const names = targetsOf(ctx);
    const aims = clockAims(ctx.options);
    for (const target of fault.targets) {
      if (!names.includes(target)) throw new Error(`clock: no ${aims === "workers" ? "worker" : "server"} named ${target} (${aims}: ${names.join(", ")})`);
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

  /**
   * A worker's clock, either way, at a holder's worker when aiming at holders.
   * Both ways matter to a lease judged by the client: set back, the holder counts
   * on a lease that has ended by everyone else's clock (node-redlock's validity,
   * a leaseUntil it writes from its own now); set forward, a client judges
   * another's lease expired early and takes it (a conditional write on
   * leaseUntil < now), as the holder's worker does at its clients' next acquires.
   */
  const injectAtWorker = async (ctx: NemesisContext): Promise<boolean> => {
    const unmoved = () => ctx.workers.filter((w) => !skews.has(w));
    if (unmoved().length === 0) return false;
    await holderAmong(ctx, unmoved(), "clock");
    if (healed) return false;
    const { target, aim } = aimWorker(ctx, unmoved());
    const mode = ctx.rng.pick(ctx.options.clockModes);
    const offsetMs = (ctx.rng.next() < 0.5 ? -1 : 1) * ctx.options.clockOffsetMs;
    const durationMs = Math.round(ctx.rng.between(ctx.options.faultMinMs, ctx.options.faultMaxMs));
    await perform(ctx, { targets: [target], mode, offsetMs, durationMs, aim });
    return true;
  };

  return {
    name: "clock",
    describe:
      "bump a lock server's wall clock by +-clock-offset ms, or strobe it, for fault-min..fault-max ms, then reset it (with --aim holder: forward, on enough nodes that granted a lock held now to leave it short of a majority); with --clock-target clients, a worker's clock, either way (with --aim holder: a holder's worker)",
    async inject(ctx) {
      skew(ctx);
      if (healed) return false;
      if (clockAims(ctx.options) === "workers") return injectAtWorker(ctx);
      const aimed = aimServers(ctx.rng, ctx.options.aim, ctx.holds(), ctx.servers, ctx.servers.filter((t) => !skews.has(t)), true);
      if (!aimed) return false;
      const mode = ctx.rng.pick(ctx.options.clockModes);
      const sign = ctx.rng.next() < 0.5 ? -1 : 1;
      // At a hold, forward: the granting nodes expire its key early while its holder
      // still counts on it, and another client can take it there (K3). A clock set
      // back only keeps a key longer, which no holder notices.
      const offsetMs = (aimed.aim.aim === "holder" ? 1 : sign) * ctx.options.clockOffsetMs;
      const durationMs = Math.round(ctx.rng.between(ctx.options.faultMinMs, ctx.options.faultMaxMs));
      await perform(ctx, { targets: aimed.targets, mode, offsetMs, durationMs, aim: aimed.aim });
      return true;
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
