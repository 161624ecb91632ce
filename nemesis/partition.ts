// Partitions through the fault proxy. A cut link silently drops data (a `timeout`
// toxic of 0 on both streams: the realistic case, clients see timeouts, not
// refusals), or, with --partition-mode reset, the link's proxy is disabled so
// connections are closed and refused.
//
// Where the cluster's members talk to each other (etcd: `cluster.peers`), the
// grudge's components, restricted to the servers, also cut the members apart, so a
// member on the minority side really loses its quorum; healing heals both. The
// start event names those cuts (`member_cuts`), and for isolate-leader the leader.
import { grudge, serverCuts, EXILING, type GrudgeKind } from "./grudges.ts";
import { aimedWorkers, holderAmong, othersOver } from "./aim.ts";
import { linkFault, addToxics } from "./link-fault.ts";
import type { Link } from "../cluster/links.ts";
import type { Nemesis, NemesisContext } from "./nemesis.ts";
import { sleep } from "../lib/index.ts";

async function cutLinks(ctx: NemesisContext, links: Link[]): Promise<() => Promise<void>> {
  // With --partition-mode network the members are cut off their network, and the links as with timeout.
  if (ctx.options.partitionMode !== "reset")
    return addToxics(ctx, links, (stream) => ({ name: `partition-${stream}`, type: "timeout", stream, toxicity: 1, attributes: { timeout: 0 } }));
  const net = ctx.links!;
  // A proxy of the user's is never disabled: a run that died mid-fault would leave
  // it so. A reset_peer toxic resets its connections instead, and goes with the run's other toxics.
  const theirs = links.filter((l) => l.shared);
  const ours = links.filter((l) => !l.shared);
  const undoTheirs = theirs.length
    ? await addToxics(ctx, theirs, (stream) => ({ name: `partition-${stream}`, type: "reset_peer", stream, toxicity: 1, attributes: { timeout: 0 } }))
    : async () => {};
  const enable = (enabled: boolean) => Promise.all(ours.map((l) => net.proxy(l).update({ enabled } as never)));
  try {
    await enable(false);
  } catch (err) {
    await Promise.all([undoTheirs(), enable(true).catch(() => {})]);
    throw err;
  }
  return async () => void (await Promise.all([undoTheirs(), enable(true)]));
}

/** How long isolate-leader waits for a cluster that is electing a leader (as after the last partition healed) to have one. */
const LEADER_WAIT_MS = 3000;

/** The leader of the moment, once the cluster has one (null: none within LEADER_WAIT_MS, or a cluster that cannot say). */
async function leaderOf(ctx: NemesisContext): Promise<string | null> {
  const ask = ctx.cluster.leader;
  if (!ask) return null;
  for (const deadline = Date.now() + LEADER_WAIT_MS; ; await sleep(100)) {
    const leader = (await ask.call(ctx.cluster)) ?? null;
    if (leader !== null || Date.now() >= deadline) return leader;
  }
}

export const partitionNemesis = (): Nemesis =>
  linkFault({
    name: "partition",
    describe: "cut worker-to-server links through the fault proxy, with Jepsen's grudges (and members from each other, where they talk)",
    async plan(ctx) {
      // Aimed, two turns in three take a grudge that can leave a holder's worker
      // without the lock service while another keeps it (its lease runs out, the
      // other side takes the lock, and it still writes: the stale write fencing
      // must refuse); the third keeps the others (isolating a leader, a bridge) in
      // the schedule.
      const exiling = ctx.options.grudges.filter((k) => EXILING.includes(k as GrudgeKind));
      // Not over another fault (a frozen holder): see othersOver. Then, as a pause
      // does, wait a little for a holder rather than cut links that matter to
      // nobody (the first fault comes soon after the clients start).
      await othersOver(ctx, "partition");
      if (exiling.length > 0) await holderAmong(ctx, ctx.workers, "partition");
      const holders = aimedWorkers(ctx);
      const aimed = holders.length > 0 && exiling.length > 0 && ctx.rng.next() < 2 / 3;
      const kind = ctx.rng.pick(aimed ? exiling : ctx.options.grudges) as GrudgeKind;
      const holder = aimed ? ctx.rng.pick(holders) : null;
      const leader = kind === "isolate-leader" ? await leaderOf(ctx) : null;
      const g = grudge(kind, ctx.rng, ctx.workers, ctx.servers, leader, holder);
      const links = g.cut.flatMap(([w, s]) => ctx.links!.between([w], [s]));
      const aim =
        holder !== null
          ? { aim: "holder", holder, exiled: g.exiled }
          : holders.length > 0 && exiling.length > 0
            ? { aim: "random", held: holders.length, why: "one partition in three draws from every grudge" }
            : holders.length > 0 && ctx.options.aim === "holder"
              ? { aim: "random", held: holders.length, why: `no grudge of --partition can leave a holder without the lock service (${EXILING.join(" and ")} can)` }
              : ctx.options.aim === "holder"
              ? { aim: "random", held: holders.length }
              : { aim: "random" };
      const value: Record<string, unknown> = { grudge: kind, mode: ctx.options.partitionMode, components: g.components, ...aim };
      if (kind === "isolate-leader") value.leader = leader;
      if (ctx.cluster.peers) value.member_cuts = serverCuts(g.components, ctx.servers);
      return { links, value };
    },
    // A script names the links it cuts; the members' own network is left whole.
    chosen: (ctx) => ({ mode: ctx.options.partitionMode }),
    async apply(ctx, links, plan) {
      const undoLinks = await cutLinks(ctx, links);
      const peers = ctx.cluster.peers;
      if (!peers || !plan.value.components) return undoLinks;
      const components = (plan.value.components as string[][]).map((c) => c.filter((x) => ctx.servers.includes(x)));
      try {
        await peers.partition(components);
      } catch (err) {
        await undoLinks();
        throw err;
      }
      return async () => {
        await Promise.all([undoLinks(), peers.heal()]);
      };
    },
  });
