// Slow links: latency with jitter, both ways, on every link of a random subset of
// the workers (their links to the resource included), leaving at least one worker
// fast. A slow holder's write then lands after its lease has expired and a fast
// client has taken the lock and written: K2 of the catalogue.
//
// The subset includes a worker whose client holds the lock right now when there is
// one (--aim holder, the default), as the pause nemesis aims at holders:
// on a hot key the fast clients retry every few ms while a slow client's attempt
// takes a whole slow round trip, so a slow worker that holds nothing rarely wins
// the lock during the fault, and a fault that slows no holder proves nothing. A
// holder whose write has not left yet sends it into the slow link; with the
// default latency (1.2 x TTL each way) it lands after its lease has run out and
// after the next holder, which took the lock at expiry, has written.
import { linkFault, addToxics } from "./link-fault.ts";
import type { Nemesis } from "./nemesis.ts";
import { aimedWorkers, holderAmong, workerAim } from "./aim.ts";
import type { Rng } from "../lib/index.ts";

/**
 * The workers to slow: at least one, never all of them (when there are two or
 * more), one of `holders` among them when any is given.
 */
export function slowWorkers(r: Rng, workers: readonly string[], holders: readonly string[]): string[] {
  const rest = [...workers];
  const count = rest.length > 1 ? r.int(1, rest.length - 1) : 1;
  const held = rest.filter((w) => holders.includes(w));
  const slow = held.length ? rest.splice(rest.indexOf(r.pick(held)), 1) : [];
  while (slow.length < count) slow.push(...rest.splice(r.int(0, rest.length - 1), 1));
  return slow;
}

export const latencyNemesis = (): Nemesis =>
  linkFault({
    name: "latency",
    describe: "add latency with jitter to every link of some workers, a holder's first (writes land after their lease)",
    async plan(ctx) {
      // As a pause does, wait a little for a hold rather than slow a worker that holds nothing.
      await holderAmong(ctx, ctx.workers, "latency");
      const holders = aimedWorkers(ctx);
      const slow = slowWorkers(ctx.rng, ctx.workers, holders);
      const { latencyMs, jitterMs } = ctx.options;
      return { links: ctx.links!.all.filter((l) => slow.includes(l.worker)), value: { latency_ms: latencyMs, jitter_ms: jitterMs, ...workerAim(ctx.options.aim, slow, holders) } };
    },
    chosen: (ctx, fault) => ({ latency_ms: fault.latencyMs ?? ctx.options.latencyMs, jitter_ms: fault.jitterMs ?? ctx.options.jitterMs }),
    apply: (ctx, links, plan) =>
      addToxics(ctx, links, (stream) => ({ name: `latency-${stream}`, type: "latency", stream, toxicity: 1, attributes: { latency: plan.value.latency_ms, jitter: plan.value.jitter_ms } })),
  });
