// What the harness asks etcd members directly (on their real client ports, never
// through a worker's proxies): is a member healthy, what are the member ids, who
// leads. These are the test's own questions, not operations of the system under
// test, so they are not recorded in the history.
import { Etcd3, type IOptions } from "etcd3";
import { prefixEnd } from "./connection.ts";

type Policy = NonNullable<NonNullable<IOptions["faultHandling"]>["global"]>;

// Each call once: etcd3's default global policy retries a failed call up to three
// times, which would hide what a member answered.
const callOnce = { execute: async <T>(fn: (ctx: { signal: AbortSignal }) => PromiseLike<T> | T) => fn({ signal: new AbortController().signal }) } as unknown as Policy;

/** The hex form etcd prints and puts in X-Server-From; the API gives ids in decimal. */
export const hexId = (decimal: string): string => BigInt(decimal).toString(16);

export class EtcdAdmin {
  private readonly client: Etcd3;

  constructor(readonly member: string, port: number, timeoutMs = 1000, host = "127.0.0.1") {
    this.client = new Etcd3({
      hosts: [`http://${host}:${port}`],
      faultHandling: { global: callOnce },
      defaultCallOptions: () => ({ deadline: new Date(Date.now() + timeoutMs) }),
      grpcOptions: { "grpc.use_local_subchannel_pool": 1, "grpc.initial_reconnect_backoff_ms": 50, "grpc.max_reconnect_backoff_ms": 500 },
    });
  }

  /** A linearizable read: it needs a leader that still has a quorum. */
  async healthy(): Promise<boolean> {
    try {
      await this.client.kv.range({ key: Buffer.from("fencecheck/health") });
      return true;
    } catch {
      return false;
    }
  }

  /** This member's view: its id, the leader it knows (hex ids) and its raft term; null when it does not answer. */
  async status(): Promise<{ id: string; leader: string; term: number } | null> {
    try {
      const s = await this.client.maintenance.status();
      return { id: hexId(s.header.member_id), leader: s.leader === "0" ? "" : hexId(s.leader), term: Number(s.raftTerm) };
    } catch {
      return null;
    }
  }

  /** Member name -> hex id. */
  async memberIds(): Promise<Map<string, string>> {
    const res = await this.client.cluster.memberList({});
    return new Map(res.members.map((m) => [m.name, hexId(m.ID)]));
  }

  /** Delete every key under `prefix`: a run's keys on a cluster it shares (--deploy external). The number deleted. */
  async deleteUnder(prefix: string): Promise<number> {
    const res = await this.client.kv.deleteRange({ key: Buffer.from(prefix), range_end: prefixEnd(prefix) });
    return Number(res.deleted);
  }

  /**
   * The TTL the member granted a lease (hex id, as the lock clients report it) and
   * what is left of it, in whole seconds as etcd counts them; null when the lease is
   * gone. A client asks for a TTL; the server may grant more (its minimum follows
   * from the election timeout).
   */
  async leaseTtl(leaseHex: string): Promise<{ granted_s: number; remaining_s: number } | null> {
    const res = await this.client.leaseClient.leaseTimeToLive({ ID: BigInt(`0x${leaseHex}`).toString() });
    const remaining = Number(res.TTL);
    return remaining < 0 ? null : { granted_s: Number(res.grantedTTL), remaining_s: remaining };
  }

  close(): void {
    this.client.close();
  }
}
