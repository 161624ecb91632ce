// What partitions and latency have in common: a fault on a set of proxied links
// that lasts a random time in --fault-min..--fault-max, one at a time, recorded
// as a start and a stop event, and healed early by the final heal.
import type { Toxic } from "toxiproxy-node-client";
import { linkName, type Link } from "../cluster/links.ts";
import type { Nemesis, NemesisContext } from "./nemesis.ts";

export interface LinkFaultPlan {
  links: Link[];
  /** Facts for the start event besides the targets and the duration. */
  value: Record<string, unknown>;
}

export interface LinkFaultSpec {
  /** "partition" gives start-partition / stop-partition events. */
  name: string;
  describe: string;
  /** Which links to hit this time, or null to skip this turn. */
  plan(ctx: NemesisContext): LinkFaultPlan | null | Promise<LinkFaultPlan | null>;
  /** Put the fault on the links (and whatever else the plan says); returns what undoes it. */
  apply(ctx: NemesisContext, links: Link[], plan: LinkFaultPlan): Promise<() => Promise<void>>;
}

export function linkFault(spec: LinkFaultSpec): Nemesis {
  let active: { links: Link[]; undo: () => Promise<void>; timer: NodeJS.Timeout } | null = null;
  let injecting: Promise<void> | null = null;

  const end = async (ctx: NemesisContext): Promise<void> => {
    if (!active) return;
    const { links, undo, timer } = active;
    active = null;
    clearTimeout(timer);
    await undo();
    ctx.record(`stop-${spec.name}`, { targets: links.map(linkName) });
  };

  return {
    name: spec.name,
    describe: spec.describe,
    async inject(ctx) {
      if (!ctx.links || active || injecting) return;
      injecting = (async () => {
        const plan = await spec.plan(ctx);
        if (!plan || plan.links.length === 0) return;
        const ms = Math.round(ctx.rng.between(ctx.options.faultMinMs, ctx.options.faultMaxMs));
        const undo = await spec.apply(ctx, plan.links, plan);
        active = { links: plan.links, undo, timer: setTimeout(() => void end(ctx), ms) };
        ctx.record(`start-${spec.name}`, { ...plan.value, targets: plan.links.map(linkName), duration_ms: ms });
      })();
      try {
        await injecting;
      } finally {
        injecting = null;
      }
    },
    // The final heal may come while a fault is being put in place (planning asks the
    // cluster who leads): it waits for that fault, so none outlives the heal.
    heal: async (ctx) => {
      await injecting?.catch(() => {});
      await end(ctx);
    },
    active: () => (active ? [`${spec.name} on ${active.links.length} links`] : []),
  };
}

/** Add one toxic per stream to each link; the undo removes them all. */
export async function addToxics(ctx: NemesisContext, links: Link[], toxic: (stream: "upstream" | "downstream") => object): Promise<() => Promise<void>> {
  const net = ctx.links!;
  const added: Array<Toxic<unknown>> = [];
  for (const l of links)
    for (const stream of ["upstream", "downstream"] as const) added.push(await net.proxy(l).addToxic(toxic(stream) as never));
  return async () => {
    await Promise.all(added.map((t) => t.remove().catch(() => {})));
  };
}
