// Partitions through the fault proxy. A cut link silently drops data (a `timeout`
// toxic of 0 on both streams: the realistic case, clients see timeouts, not
// refusals), or, with --partition-mode reset, the link's proxy is disabled so
// connections are closed and refused.
import { grudge, type GrudgeKind } from "./grudges.ts";
import { linkFault, addToxics } from "./link-fault.ts";
import type { Nemesis } from "./nemesis.ts";

export const partitionNemesis = (): Nemesis =>
  linkFault({
    name: "partition",
    describe: "cut worker-to-server links through the fault proxy, with Jepsen's grudges",
    plan(ctx) {
      const kind = ctx.rng.pick(ctx.options.grudges) as GrudgeKind;
      const g = grudge(kind, ctx.rng, ctx.workers, ctx.servers);
      const links = g.cut.flatMap(([w, s]) => ctx.links!.between([w], [s]));
      return { links, value: { grudge: kind, mode: ctx.options.partitionMode, components: g.components } };
    },
    async apply(ctx, links) {
      if (ctx.options.partitionMode === "timeout")
        return addToxics(ctx, links, (stream) => ({ name: `partition-${stream}`, type: "timeout", stream, toxicity: 1, attributes: { timeout: 0 } }));
      const net = ctx.links!;
      const enable = (enabled: boolean) => Promise.all(links.map((l) => net.proxy(l).update({ enabled } as never)));
      await enable(false);
      return async () => void (await enable(true));
    },
  });
