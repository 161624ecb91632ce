// Slow links: latency with jitter, both ways, on every link of a random subset of
// the workers (their links to the resource included), leaving at least one worker
// fast. A slow holder's write then lands after its lease has expired and a fast
// client has taken the lock and written: K2 of the catalogue.
import { linkFault, addToxics } from "./link-fault.ts";
import type { Nemesis } from "./nemesis.ts";

export const latencyNemesis = (): Nemesis =>
  linkFault({
    name: "latency",
    describe: "add latency with jitter to every link of some workers (writes land after their lease)",
    plan(ctx) {
      const workers = [...ctx.workers];
      const slow: string[] = [];
      const count = workers.length > 1 ? ctx.rng.int(1, workers.length - 1) : 1;
      while (slow.length < count) slow.push(...workers.splice(ctx.rng.int(0, workers.length - 1), 1));
      const { latencyMs, jitterMs } = ctx.options;
      return { links: ctx.links!.all.filter((l) => slow.includes(l.worker)), value: { latency_ms: latencyMs, jitter_ms: jitterMs } };
    },
    chosen: (ctx, fault) => ({ latency_ms: fault.latencyMs ?? ctx.options.latencyMs, jitter_ms: fault.jitterMs ?? ctx.options.jitterMs }),
    apply: (ctx, links, plan) =>
      addToxics(ctx, links, (stream) => ({ name: `latency-${stream}`, type: "latency", stream, toxicity: 1, attributes: { latency: plan.value.latency_ms, jitter: plan.value.jitter_ms } })),
  });
