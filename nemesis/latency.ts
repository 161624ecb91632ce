// Slow links: latency with jitter, both ways, on every link of a random subset of
// the workers (their links to the resource included), leaving at least one worker
// fast. A slow holder's write then lands after its lease has expired and a fast
// client has taken the lock and written: K2 of the catalogue.
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
      const workers = [...ctx.workers];
      const slow: string[] = [];
      const count = workers.length > 1 ? ctx.rng.int(1, workers.length - 1) : 1;
      while (slow.length < count) slow.push(...workers.splice(ctx.rng.int(0, workers.length - 1), 1));
      const links = net.all.filter((l) => slow.includes(l.worker));
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
