// Slow links: latency with jitter, both ways, on a random subset of worker links
// (the resource's included). Long enough, it delivers a write after its hold's
// lease has expired and the next holder has written: K2 of the catalogue.
import type { Toxic } from "toxiproxy-node-client";
import { linkName, type Link } from "../cluster/links.ts";
import type { Nemesis, NemesisContext } from "./nemesis.ts";

export function latencyNemesis(): Nemesis {
  let active: { links: Link[]; toxics: Array<Toxic<unknown>>; timer: NodeJS.Timeout } | null = null;

  const end = async (ctx: NemesisContext): Promise<void> => {
    if (!active) return;
    const { links, toxics, timer } = active;
    active = null;
    clearTimeout(timer);
    await Promise.all(toxics.map((t) => t.remove().catch(() => {})));
    ctx.record("stop-latency", { targets: links.map(linkName) });
  };

  return {
    name: "latency",
    describe: "add latency with jitter to a random subset of links (writes land after their lease)",
    async inject(ctx) {
      const net = ctx.links;
      if (!net || active) return;
      let links = net.all.filter(() => ctx.rng.next() < 0.5);
      if (links.length === 0) links = [ctx.rng.pick(net.all)];
      const { latencyMs, jitterMs } = ctx.options;
      const ms = Math.round(ctx.rng.between(ctx.options.faultMinMs, ctx.options.faultMaxMs));
      const toxics: Array<Toxic<unknown>> = [];
      for (const l of links)
        for (const stream of ["upstream", "downstream"] as const)
          toxics.push(await net.proxy(l).addToxic({ name: `latency-${stream}`, type: "latency", stream, toxicity: 1, attributes: { latency: latencyMs, jitter: jitterMs } } as never));
      active = { links, toxics, timer: setTimeout(() => void end(ctx), ms) };
      ctx.record("start-latency", { targets: links.map(linkName), latency_ms: latencyMs, jitter_ms: jitterMs, duration_ms: ms });
    },
    heal: end,
    active: () => (active ? [`latency on ${active.links.length} links`] : []),
  };
}
