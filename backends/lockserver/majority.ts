// The seed's replicated lock manager: five independent lock servers (no
// consensus, no replication between them), a lock held when a majority granted
// it. What many teams build on top of a lock server that works, and what the
// majority scenarios (M1-M4) take apart.
//
// acquire: the same owner asks every server at once, each queueing it (FIFO) for
//   up to the acquire's wait. Held once a majority granted, and only while the
//   oldest of those grants' leases still runs (validity = TTL - time since that
//   grant - drift, as Redlock counts it): a grant that waited in one queue while
//   its lease ran out on another server is no grant. The waits still pending on
//   the others go on; a later grant there is more of the same hold.
//   Not held by the deadline: released on every server (which also withdraws a
//   wait still queued), then `fail` only if no majority can still hold the owner.
// renew: on every server; ok when a majority renewed.
// release: on every server.
// fence (--fence-source): max-incr, the largest fence of the granting majority
//   (each server counts its own grants, so two majorities' counters drift apart:
//   F2's shape); single, the next number of lockserver-1's counter for the key
//   (only rises while that server keeps it); none.
import { LockServerConnection, NEVER_SENT, type ServerAnswer } from "./connection.ts";
import { UnknownOutcome, type ClientContext, type FenceSource, type Hold, type LockClient, type Outcome } from "../../clients/lock.ts";
import { atLeast, validityLeft } from "../../clients/majority.ts";

/** One server's part in one request: its answer once in, and on which connection it was asked. */
interface Vote {
  server: number;
  answer: Promise<ServerAnswer | "unknown">;
  /** Filled in when the answer arrives. */
  settled: ServerAnswer | "unknown" | null;
  /** When a grant arrived (performance.now()). */
  at: number;
  /** The connection it went out on (NEVER_SENT until it did). */
  sentVia: number;
}

export class LockServerMajority implements LockClient {
  readonly renews = true;
  private readonly servers: LockServerConnection[];
  private readonly quorum: number;
  private readonly fenceSource: FenceSource;
  private readonly commandTimeoutMs: number;
  private readonly ownerPrefix: string;
  private holds = 0;

  constructor(ctx: ClientContext) {
    this.servers = ctx.endpoints.map((e) => new LockServerConnection(e, ctx.commandTimeoutMs));
    this.quorum = Math.floor(this.servers.length / 2) + 1;
    this.fenceSource = ctx.options.fenceSource ?? "max-incr";
    this.commandTimeoutMs = ctx.commandTimeoutMs;
    this.ownerPrefix = ctx.ownerPrefix;
  }

  /** Ask every server; each vote settles on its own. */
  private askAll(request: Record<string, unknown>, timeoutMs: number): Vote[] {
    return this.servers.map((s, server) => {
      const vote: Vote = { server, answer: Promise.resolve("unknown"), settled: null, at: 0, sentVia: NEVER_SENT };
      vote.answer = s.ask(request, timeoutMs, { sent: (via) => (vote.sentVia = via) }).then(
        (a) => a,
        (e: unknown) => {
          if (e instanceof UnknownOutcome) return "unknown" as const;
          throw e;
        },
      );
      void vote.answer.then((a) => {
        vote.settled = a;
        vote.at = performance.now();
      });
      return vote;
    });
  }

  async acquire(key: string, ttlMs: number, timeoutMs: number): Promise<Outcome<Hold>> {
    const owner = `${this.ownerPrefix}-h${++this.holds}`;
    const votes = this.askAll({ op: "acquire", key, owner, ttlMs, waitMs: timeoutMs }, timeoutMs + this.commandTimeoutMs);
    let expired = false;
    if (await majority(votes, this.quorum)) {
      const granted = votes.filter(isYes);
      const validity = validityLeft(ttlMs, performance.now() - Math.min(...granted.map((v) => v.at)));
      if (validity > 0) {
        // Held now: a single counter's round trip below does not move the acquire's ok.
        const answeredAt = process.hrtime.bigint();
        const fence = await this.fence(key, granted);
        return { type: "ok", value: { owner, fence, ttlMs, answeredAt, extra: { validity_ms: validity, granted: granted.map((v) => this.servers[v.server].name) } } };
      }
      // The first grant's lease ran out while the last was still queued: no majority holds it now.
      expired = true;
    }
    // Not held: let go everywhere (a wait still queued is withdrawn), then say what may remain.
    const releases = this.askAll({ op: "release", key, owner }, this.commandTimeoutMs);
    const clean = await Promise.all(votes.map((v, i) => undone(v, releases[i])));
    const maybe = clean.filter((c) => !c).length;
    if (maybe >= this.quorum) throw new UnknownOutcome("maybe-held", `acquire ${key}: no majority in time, and ${maybe} servers may still hold ${owner}`);
    return { type: "fail", error: expired ? "expired" : failReason(votes.map((v) => v.settled), this.quorum) };
  }

  /** The hold's fence, by --fence-source; the lock is held by now, so a fence that cannot be had is an unknown outcome. */
  private async fence(key: string, granted: Vote[]): Promise<number | null> {
    if (this.fenceSource === "none") return null;
    if (this.fenceSource !== "single") return Math.max(...granted.map((v) => (v.settled as ServerAnswer & { type: "ok" }).fence ?? 0));
    const first = this.servers[0];
    const r = await first.ask({ op: "fence", key }, this.commandTimeoutMs).catch((e: unknown) => (e instanceof UnknownOutcome ? null : Promise.reject(e)));
    if (r?.type === "ok" && r.fence !== undefined) return r.fence;
    throw new UnknownOutcome("no-fence", `the lock was granted but ${first.name}, the single fence counter, gave no fence (${r === null ? "no answer" : r.type === "fail" ? r.error : "none"}): a hold without its fence`);
  }

  async renew(key: string, hold: Hold, ttlMs: number): Promise<Outcome<{ ttlMs: number }>> {
    const votes = this.askAll({ op: "renew", key, owner: hold.owner, ttlMs }, this.commandTimeoutMs);
    if (await majority(votes, this.quorum)) return { type: "ok", value: { ttlMs } };
    const settled = await Promise.all(votes.map((v) => v.answer));
    const refused = settled.filter((a) => a !== "unknown" && a.type === "fail").length;
    if (refused > this.servers.length - this.quorum) return { type: "fail", error: failReason(settled, this.quorum) };
    throw new UnknownOutcome("no-quorum", `renew ${key}: no majority renewed, and ${settled.filter((a) => a === "unknown").length} servers did not answer`);
  }

  async release(key: string, hold: Hold): Promise<Outcome<{ released: boolean }>> {
    const answers = await Promise.all(this.askAll({ op: "release", key, owner: hold.owner }, this.commandTimeoutMs).map((v) => v.answer));
    if (answers.some((a) => a !== "unknown" && a.type === "ok" && a.released)) return { type: "ok", value: { released: true } };
    if (answers.includes("unknown")) throw new UnknownOutcome("timeout", `release ${key}: ${answers.filter((a) => a === "unknown").length} servers did not answer and none said it released`);
    return { type: "ok", value: { released: false } };
  }

  async close(): Promise<void> {
    for (const s of this.servers) s.close();
  }
}

const isYes = (v: Vote): boolean => v.settled !== null && v.settled !== "unknown" && v.settled.type === "ok";

/** True as soon as `quorum` votes are grants; false once that can no longer happen (Redlock's count of answers). */
const majority = (votes: Vote[], quorum: number): Promise<boolean> => atLeast(votes.map((v) => v.answer.then((a) => a !== "unknown" && a.type === "ok")), quorum);

/**
 * Whether a server certainly does not hold the owner after the release: its
 * acquire was refused or never sent, or the release was answered on the
 * connection the acquire went out on (the server reads one connection's
 * requests in order, so the release ran after the acquire and undid it, or
 * withdrew its wait).
 */
async function undone(acquire: Vote, release: Vote): Promise<boolean> {
  const r = await release.answer;
  const a = acquire.settled;
  if (a !== null && a !== "unknown" && a.type === "fail") return true;
  return r !== "unknown" && r.via !== NEVER_SENT && r.via === acquire.sentVia;
}

/** Why an attempt or a renew failed: the refusal most servers gave, or "no-quorum". */
function failReason(answers: Array<ServerAnswer | "unknown" | null>, quorum: number): string {
  const counts = new Map<string, number>();
  for (const a of answers) if (a !== null && a !== "unknown" && a.type === "fail") counts.set(a.error, (counts.get(a.error) ?? 0) + 1);
  const [top] = [...counts.entries()].sort((x, y) => y[1] - x[1]);
  return top && top[1] >= quorum ? top[0] : "no-quorum";
}
