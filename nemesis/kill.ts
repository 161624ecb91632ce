// Crash faults on lock servers: SIGKILL one (no shutdown, no last fsync) and
// start it again after --restart-delay ms on the same port and data directory.
// What it remembers is what --redis-persistence made it write: with none, a node
// that granted a lock comes back without it and grants it again (K4), and its
// fence counter starts over (F1).
import type { Fault, Nemesis, NemesisContext } from "./nemesis.ts";
import { aimServers, tooLate } from "./aim.ts";

export function killNemesis(): Nemesis {
  /** Killed nodes until they answer again: the timer that restarts each (none: the final heal does), then the restart. */
  const down = new Map<string, { timer: NodeJS.Timeout | undefined; restarting: Promise<void> | null; endsAt: number }>();
  /** Set by the final heal: a kill that was under way when it came is undone at once. */
  let healed = false;
  /**
   * An ensemble that elects a leader (etcd, ZooKeeper, Hazelcast's CP members)
   * is not whole again when a restarted member answers: it still has to rejoin
   * and catch up from the leader. Until one lease after its restart (the time a
   * client's session or lease takes to notice), the ensemble counts as still
   * under the kill: no second kill, and a pause aimed at holders that finds none
   * waits it out. Kills 0.1-0.7 s after a restart took ZooKeeper's quorum again
   * before it had settled, nobody held for the rest of the run, and the pauses
   * landed on workers holding nothing: 3 of the 40 twenty-second kill,pause runs
   * on 2026-11-30 missed their stale write so.
   */
  let settlesAt = 0;

  const abilities = (ctx: NemesisContext) => {
    const cluster = ctx.cluster;
    // buildTest refuses --nemesis kill for a backend without the ability.
    if (!cluster.kill || !cluster.restart) throw new Error("this backend's servers cannot be killed and restarted");
    return { kill: (name: string) => cluster.kill!(name), restart: (name: string) => cluster.restart!(name) };
  };

  const restart = (ctx: NemesisContext, target: string): Promise<void> => {
    const d = down.get(target);
    if (!d) return Promise.resolve();
    clearTimeout(d.timer);
    d.restarting ??= abilities(ctx)
      .restart(target)
      .then(
        () => {
          down.delete(target);
          if (ctx.cluster.leader) settlesAt = Math.max(settlesAt, Date.now() + ctx.options.leaseMs);
          ctx.record("restart", { targets: [target] });
        },
        (err: unknown) => {
          // Still down until the final heal, which tries again.
          d.restarting = null;
          d.endsAt = Infinity;
          throw err;
        },
      );
    return d.restarting;
  };

  const perform = async (ctx: NemesisContext, fault: Fault): Promise<void> => {
    const { kill } = abilities(ctx);
    if (healed) return;
    for (const target of fault.targets) {
      if (!ctx.servers.includes(target)) throw new Error(`kill: no server named ${target} (servers: ${ctx.servers.join(", ")})`);
      if (down.has(target)) throw new Error(`kill: ${target} is already down`);
    }
    const delayMs = fault.durationMs;
    for (const target of fault.targets) {
      await kill(target);
      const timer =
        delayMs === null
          ? undefined
          : setTimeout(() => {
              restart(ctx, target).catch((err) => process.stderr.write(`kill: could not restart ${target}: ${err instanceof Error ? err.message : String(err)}\n`));
            }, delayMs);
      down.set(target, { timer, restarting: null, endsAt: delayMs === null ? Infinity : Date.now() + delayMs });
      ctx.record("kill", { targets: [target], ...(delayMs === null ? {} : { restart_delay_ms: delayMs }), ...fault.aim });
      if (healed) await restart(ctx, target);
    }
  };

  return {
    name: "kill",
    describe: "SIGKILL a lock server (with --aim holder: enough nodes that granted a lock held now to leave it short of a majority) and start it again after restart-delay ms",
    async inject(ctx) {
      abilities(ctx);
      // One kill at a time: the turn passes while a server of the last kill is
      // still down. With the short gaps of a ten-second run (0.67 s), kills came
      // faster than their restarts, took a three-member ZooKeeper ensemble's
      // quorum, and nobody held at all: zookeeper-naive under kill,pause found
      // its stale write in 2 of 9 runs, against 19 of 20 at 2 s gaps. A kill
      // aimed at a hold still takes as many nodes as leave it short of a majority.
      if (healed || tooLate(ctx) || down.size > 0 || Date.now() < settlesAt) return false;
      // Nodes that granted a hold held now, as many as leave it short of a majority
      // (one of a single Redis, three of a Redlock hold granted by all five: a rack
      // losing power): with no persistence they come back without the key and grant
      // it again while the holder still counts on it (K4).
      const aimed = aimServers(ctx.rng, ctx.options.aim, ctx.holds(), ctx.servers, ctx.servers.filter((t) => !down.has(t)), true);
      if (!aimed) return false;
      await perform(ctx, { targets: aimed.targets, durationMs: ctx.options.restartDelayMs, aim: aimed.aim });
      return true;
    },
    perform,
    async heal(ctx) {
      healed = true;
      await Promise.all([...down.keys()].map((t) => restart(ctx, t)));
    },
    active: () => [...down.keys()].map((t) => `killed ${t}`),
    // Down until restarted, however long past its planned time the restart takes
    // (a JVM member takes a second or more to answer), and an ensemble until it settles.
    endsAt: () => {
      const now = Date.now();
      return Math.max(0, ...[...down.values()].map((d) => Math.max(d.endsAt, now + 1)), settlesAt > now ? settlesAt : 0);
    },
  };
}
