// Jepsen's grudges for a client-server topology: which worker-to-server links a
// partition cuts. Workers and lock servers are split into components; a worker
// keeps only its links to servers that share a component with it. The resource
// is never partitioned: it is the judge, not a party.
import type { Rng } from "../lib/index.ts";

export const GRUDGES = ["isolate-one", "majority-minority", "random-halves", "bridge"] as const;
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

function components(kind: GrudgeKind, rng: Rng, workers: readonly string[], servers: readonly string[]): string[][] {
  switch (kind) {
    case "isolate-one": {
      const s = rng.pick(servers);
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

export function grudge(kind: GrudgeKind, rng: Rng, workers: readonly string[], servers: readonly string[]): Grudge {
  const comps = components(kind, rng, workers, servers);
  const cut: Array<[string, string]> = [];
  for (const w of workers)
    for (const s of servers) if (!comps.some((c) => c.includes(w) && c.includes(s))) cut.push([w, s]);
  return { kind, components: comps, cut };
}
