// Jepsen's grudges for a client-server topology: which worker-to-server links a
// partition cuts. Workers and lock servers are split into components; a worker
// keeps only its links to servers that share a component with it. The resource
// is never partitioned: it is the judge, not a party. Where the servers talk to
// each other (etcd members), the same components also say which servers are cut
// off from each other (serverCuts).
import type { Rng } from "../lib/index.ts";

export const GRUDGES = ["isolate-one", "isolate-leader", "majority-minority", "random-halves", "bridge"] as const;
export type GrudgeKind = (typeof GRUDGES)[number];

export interface Grudge {
  kind: GrudgeKind;
  /** Each component: the workers and servers that still reach each other. */
  components: string[][];
  /** [worker, server] pairs cut off from each other. */
  cut: Array<[string, string]>;
}

function shuffled<T>(rng: Rng, items: readonly T[]): T[] {
  const a = [...items];
  for (let i = a.length - 1; i > 0; i--) {
    const j = rng.int(0, i);
    [a[i], a[j]] = [a[j], a[i]];
  }
  return a;
}

/** Split workers in two non-empty sides where there are two or more. */
function splitWorkers(rng: Rng, workers: readonly string[]): [string[], string[]] {
  const w = shuffled(rng, workers);
  const k = w.length < 2 ? w.length : rng.int(1, w.length - 1);
  return [w.slice(0, k), w.slice(k)];
}

function components(kind: GrudgeKind, rng: Rng, workers: readonly string[], servers: readonly string[], leader: string | null): string[][] {
  switch (kind) {
    case "isolate-one":
    case "isolate-leader": {
      // The pick is made either way, so a known leader does not shift the seeded schedule.
      const picked = rng.pick(servers);
      const s = kind === "isolate-leader" && leader !== null && servers.includes(leader) ? leader : picked;
      return [[s], [...workers, ...servers.filter((x) => x !== s)]];
    }
    case "majority-minority": {
      const s = shuffled(rng, servers);
      const majority = s.slice(0, Math.floor(s.length / 2) + 1);
      const minority = s.slice(majority.length);
      const [few, many] = splitWorkers(rng, workers);
      return [[...many, ...majority], [...few, ...minority]];
    }
    case "random-halves": {
      const all = shuffled(rng, [...workers, ...servers]);
      const half = Math.ceil(all.length / 2);
      return [all.slice(0, half), all.slice(half)];
    }
    case "bridge": {
      // Two halves that both reach one bridge server, and not each other.
      const s = shuffled(rng, servers);
      const bridge = s[0];
      const rest = s.slice(1);
      const [left, right] = splitWorkers(rng, workers);
      const mid = Math.ceil(rest.length / 2);
      return [[...left, bridge, ...rest.slice(0, mid)], [...right, bridge, ...rest.slice(mid)]];
    }
  }
}

/**
 * `leader`: the server that leads now, for isolate-leader (a consensus cluster's
 * leader; without one, isolate-leader isolates a random server like isolate-one).
 */
export function grudge(kind: GrudgeKind, rng: Rng, workers: readonly string[], servers: readonly string[], leader: string | null = null): Grudge {
  const comps = components(kind, rng, workers, servers, leader);
  const cut: Array<[string, string]> = [];
  for (const w of workers)
    for (const s of servers) if (!comps.some((c) => c.includes(w) && c.includes(s))) cut.push([w, s]);
  return { kind, components: comps, cut };
}

/** Pairs of servers that share no component: the member-to-member cuts of a grudge. */
export function serverCuts(components: string[][], servers: readonly string[]): Array<[string, string]> {
  const cuts: Array<[string, string]> = [];
  for (let i = 0; i < servers.length; i++)
    for (let j = i + 1; j < servers.length; j++)
      if (!components.some((c) => c.includes(servers[i]) && c.includes(servers[j]))) cuts.push([servers[i], servers[j]]);
  return cuts;
}
