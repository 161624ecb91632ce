// Jepsen's grudges for a client-server topology: which worker-to-server links a
// partition cuts. Workers and lock servers are split into components; a worker
// keeps only its links to servers that share a component with it. The resource
// is never partitioned: it is the judge, not a party. Where the servers talk to
// each other (etcd members), the same components also say which servers are cut
// off from each other (serverCuts).
import { shuffled, type Rng } from "../lib/index.ts";

export const GRUDGES = ["isolate-one", "isolate-leader", "majority-minority", "random-halves", "bridge"] as const;
export type GrudgeKind = (typeof GRUDGES)[number];

export interface Grudge {
  kind: GrudgeKind;
  /** Each component: the workers and servers that still reach each other. */
  components: string[][];
  /** [worker, server] pairs cut off from each other. */
  cut: Array<[string, string]>;
  /**
   * Given a holder's worker to aim at: whether it ended up on a side without a
   * majority of the servers while another worker has one (it cannot renew or
   * release, its lease runs out, and a worker on the other side takes the lock
   * while it still believes it holds it).
   */
  exiled?: boolean;
}

/**
 * The grudges that cut a server off from every worker or from none, whatever the
 * draw: the only partitions a proxy all workers share (a proxy of the user's) can make.
 */
export const WHOLE_SERVER: readonly GrudgeKind[] = ["isolate-one", "isolate-leader"];

/** The grudges that can leave one worker without the lock service while another keeps it. */
export const EXILING: readonly GrudgeKind[] = ["majority-minority", "random-halves"];

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
 * `holder`: a worker whose client holds a lock, to leave on the minority side
 * where the grudge splits the workers (EXILING); the grudge is drawn as without
 * it, then the holder changes sides with a worker of the minority side.
 */
export function grudge(kind: GrudgeKind, rng: Rng, workers: readonly string[], servers: readonly string[], leader: string | null = null, holder: string | null = null): Grudge {
  let comps = components(kind, rng, workers, servers, leader);
  if (holder !== null && EXILING.includes(kind)) comps = exile(rng, comps, holder, workers, servers);
  const cut: Array<[string, string]> = [];
  for (const w of workers)
    for (const s of servers) if (!comps.some((c) => c.includes(w) && c.includes(s))) cut.push([w, s]);
  const g: Grudge = { kind, components: comps, cut };
  if (holder !== null) g.exiled = isExiled(comps, holder, workers, servers);
  return g;
}

const majority = (servers: readonly string[]) => Math.floor(servers.length / 2) + 1;
const serversIn = (c: readonly string[], servers: readonly string[]) => c.filter((x) => servers.includes(x)).length;

/**
 * Move the holder to a side without a majority of the servers (trading places
 * with a worker there, if it has one), then make sure some other worker is on a
 * side with a majority (moving one across if none is): the holder can neither
 * renew nor release, and another worker can take the lock when its lease runs out.
 */
function exile(rng: Rng, comps: string[][], holder: string, workers: readonly string[], servers: readonly string[]): string[][] {
  const out = comps.map((c) => [...c]);
  const big = out.findIndex((c) => serversIn(c, servers) >= majority(servers));
  const small = out.findIndex((c) => serversIn(c, servers) < majority(servers));
  if (big < 0 || small < 0) return out;
  const move = (x: string, from: number, to: number) => {
    out[from].splice(out[from].indexOf(x), 1);
    out[to].push(x);
  };
  if (out[big].includes(holder)) {
    const theirs = out[small].filter((x) => workers.includes(x));
    if (theirs.length) move(rng.pick(theirs), small, big);
    move(holder, big, small);
  }
  const others = (i: number) => out[i].filter((x) => workers.includes(x) && x !== holder);
  if (others(big).length === 0 && others(small).length > 0) move(rng.pick(others(small)), small, big);
  return out;
}

function isExiled(comps: string[][], holder: string, workers: readonly string[], servers: readonly string[]): boolean {
  const side = comps.filter((c) => c.includes(holder));
  if (side.some((c) => serversIn(c, servers) >= majority(servers))) return false;
  return comps.some((c) => serversIn(c, servers) >= majority(servers) && c.some((x) => x !== holder && workers.includes(x)));
}

/** Pairs of servers that share no component: the member-to-member cuts of a grudge. */
export function serverCuts(components: string[][], servers: readonly string[]): Array<[string, string]> {
  const cuts: Array<[string, string]> = [];
  for (let i = 0; i < servers.length; i++)
    for (let j = i + 1; j < servers.length; j++)
      if (!components.some((c) => c.includes(servers[i]) && c.includes(servers[j]))) cuts.push([servers[i], servers[j]]);
  return cuts;
}
