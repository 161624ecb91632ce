// What partitions and latency have in common: a fault on a set of proxied links
// that lasts a random time in --fault-min..--fault-max (or, from a script, a
// chosen time), one at a time, recorded as a start and a stop event, and healed
// early by the final heal.
import type { Toxic } from "toxiproxy-node-client";
import { linkName, type Link } from "../cluster/links.ts";
import type { Fault, Nemesis, NemesisContext } from "./nemesis.ts";
import { tooLate } from "./aim.ts";

export interface LinkFaultPlan {
  links: Link[];
  /** Facts for the start event besides the targets and the duration. */
  value: Record<string, unknown>;
}

export interface LinkFaultSpec {
  /** "partition" gives start-partition / stop-partition events. */
  name: string;
  describe: string;
  /** Which links to hit this time, chosen at random, or null to skip this turn. */
  plan(ctx: NemesisContext): LinkFaultPlan | null | Promise<LinkFaultPlan | null>;
  /** The start event's facts for a fault chosen by a script (its links are named in it). */
  chosen(ctx: NemesisContext, fault: Fault): Record<string, unknown>;
  /** Put the fault on the links (and whatever else the plan says); returns what undoes it. */
  apply(ctx: NemesisContext, links: Link[], plan: LinkFaultPlan): Promise<() => Promise<void>>;
}

export function linkFault(spec: LinkFaultSpec): Nemesis {
  let active: { links: Link[]; undo: () => Promise<void>; timer: NodeJS.Timeout | undefined; endsAt: number } | null = null;

  const end = async (ctx: NemesisContext): Promise<void> => {
    if (!active) return;
    const { links, undo, timer } = active;
    active = null;
    clearTimeout(timer);
    await undo();
    ctx.record(`stop-${spec.name}`, { targets: links.map(linkName) });
  };

  /** `ms` null: until the final heal. */
  const start = async (ctx: NemesisContext, plan: LinkFaultPlan, ms: number | null): Promise<void> => {
    const undo = await spec.apply(ctx, plan.links, plan);
    active = { links: plan.links, undo, timer: ms === null ? undefined : setTimeout(() => void end(ctx), ms), endsAt: ms === null ? Infinity : Date.now() + ms };
    const value: Record<string, unknown> = { ...plan.value, targets: plan.links.map(linkName) };
    // The history must say when a fault reached more than its targets: every worker behind a proxy of the user's.
    const shared = ctx.links!.shared(plan.links);
    if (shared.length) value.shared_proxies = shared;
    if (ms !== null) value.duration_ms = ms;
    ctx.record(`start-${spec.name}`, value);
  };

  return {
    name: spec.name,
    describe: spec.describe,
    async inject(ctx) {
      if (!ctx.links || active || tooLate(ctx)) return false;
      const plan = await spec.plan(ctx);
      // Choosing may wait (for a holder, isolate-leader for a leader): when that made it too late, the turn passes.
      if (!plan || plan.links.length === 0 || tooLate(ctx)) return false;
      await start(ctx, plan, Math.round(ctx.rng.between(ctx.options.faultMinMs, ctx.options.faultMaxMs)));
      return true;
    },
    async perform(ctx, fault) {
      const net = ctx.links;
      if (!net) throw new Error(`${spec.name}: this run has no proxied links`);
      if (active) throw new Error(`${spec.name}: one is already in force (on ${active.links.map(linkName).join(", ")})`);
      const links = fault.targets.map((name) => {
        const l = net.all.find((x) => linkName(x) === name);
        if (!l) throw new Error(`${spec.name}: no link named ${name} (links look like ${linkName(net.all[0])})`);
        return l;
      });
      if (links.length === 0) throw new Error(`${spec.name}: a fault needs at least one link`);
      await start(ctx, { links, value: spec.chosen(ctx, fault) }, fault.durationMs);
    },
    heal: end,
    active: () => (active ? [`${spec.name} on ${active.links.length} links`] : []),
    endsAt: () => active?.endsAt ?? 0,
  };
}

/**
 * Add one toxic per stream to each link, all at once: a fault lands on every link
 * within one round trip to the proxy rather than one link after another (a holder's
 * write must not slip through while its link waits its turn). Links that share a
 * proxy of the user's get it once, named under the run's prefix so it can be told
 * from the user's own. The undo removes them all; if any could not be added, those
 * that were are removed before the error goes on.
 */
export async function addToxics(ctx: NemesisContext, links: Link[], toxic: (stream: "upstream" | "downstream") => { name: string }): Promise<() => Promise<void>> {
  const net = ctx.links!;
  const proxies = [...new Map(links.map((l) => [l.proxy, net.proxy(l)])).values()];
  const named = (stream: "upstream" | "downstream") => {
    const t = toxic(stream);
    return { ...t, name: `${net.prefix}${t.name}` };
  };
  const settled = await Promise.allSettled(proxies.flatMap((p) => (["upstream", "downstream"] as const).map((stream) => p.addToxic(named(stream) as never))));
  const added: Array<Toxic<unknown>> = settled.flatMap((r) => (r.status === "fulfilled" ? [r.value] : []));
  const undo = async (): Promise<void> => {
    await Promise.all(added.map((t) => t.remove().catch(() => {})));
  };
  const failed = settled.find((r) => r.status === "rejected");
  if (failed) {
    await undo();
    throw failed.reason;
  }
  return undo;
}
