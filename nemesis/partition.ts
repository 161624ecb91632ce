// Partitions through the fault proxy. A cut link silently drops data (a `timeout`
// toxic of 0 on both streams: the realistic case, clients see timeouts, not
// refusals), or, with --partition-mode reset, the link's proxy is disabled so
// connections are closed and refused.
import type { Toxic } from "toxiproxy-node-client";
import { linkName, type Link } from "../cluster/links.ts";
import { grudge, type GrudgeKind } from "./grudges.ts";
import type { Nemesis, NemesisContext } from "./nemesis.ts";

export function partitionNemesis(): Nemesis {
  let active: { links: Link[]; toxics: Array<Toxic<unknown>>; timer: NodeJS.Timeout } | null = null;

  const end = async (ctx: NemesisContext): Promise<void> => {
    if (!active) return;
    const { links, toxics, timer } = active;
    active = null;
    clearTimeout(timer);
    const net = ctx.links!;
    await Promise.all(toxics.map((t) => t.remove().catch(() => {})));
    if (ctx.options.partitionMode === "reset") await Promise.all(links.map((l) => net.proxy(l).update({ enabled: true } as never)));
    ctx.record("stop-partition", { targets: links.map(linkName) });
  };

  return {
    name: "partition",
    describe: "cut worker-to-server links through the fault proxy, with Jepsen's grudges",
    async inject(ctx) {
      const net = ctx.links;
      if (!net || active) return;
      const kind = ctx.rng.pick(ctx.options.grudges) as GrudgeKind;
      const g = grudge(kind, ctx.rng, ctx.workers, ctx.servers);
      const links = g.cut.flatMap(([w, s]) => net.between([w], [s]));
      if (links.length === 0) return;
      const ms = Math.round(ctx.rng.between(ctx.options.faultMinMs, ctx.options.faultMaxMs));
      const toxics: Array<Toxic<unknown>> = [];
      if (ctx.options.partitionMode === "reset") {
        await Promise.all(links.map((l) => net.proxy(l).update({ enabled: false } as never)));
      } else {
        for (const l of links)
          for (const stream of ["upstream", "downstream"] as const)
            toxics.push(await net.proxy(l).addToxic({ name: `partition-${stream}`, type: "timeout", stream, toxicity: 1, attributes: { timeout: 0 } } as never));
      }
      active = { links, toxics, timer: setTimeout(() => void end(ctx), ms) };
      ctx.record("start-partition", { grudge: kind, mode: ctx.options.partitionMode, components: g.components, targets: links.map(linkName), duration_ms: ms });
    },
    heal: end,
    active: () => (active ? [`partition of ${active.links.length} links`] : []),
  };
}
