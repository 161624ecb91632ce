// Who decides a request: the resource's own memory (fences.ts), or a database
// (committed.ts: Postgres in pg-decider.ts, DynamoDB in dynamo-decider.ts). The
// memory decider logs a decision before it commits it, through `log`, which
// throws when the line could not be written: the decision is then not committed.
// A database commits first and logs what it answered (committed.ts).
import type { FencedStore } from "./fences.ts";

export interface Verdict {
  /** null: the store was lost during the commit, and nobody knows (committed.ts; logged, never returned). */
  accepted: boolean | null;
  /** The highest fence accepted on the key before this decision (max_before). */
  maxBefore: number | null;
  /** A semaphore's: how many higher fences the write had seen accepted. */
  higher?: number;
  /** A store's place for the decision among its key's (committed.ts); absent: the log's order is that order. */
  order?: number | null;
}

export interface ReadVerdict extends Verdict {
  /** The value read (null when refused) and the key's highest accepted fence after the decision. */
  data: unknown;
  maxSeen: number | null;
}

export type LogDecision = (v: Verdict & { data?: unknown }) => void;

export interface Decider {
  readonly fencing: boolean;
  /** A semaphore's permits (1 for the other rules), for the lines of its writes. */
  readonly permits?: number;
  write(key: string, fence: number | null, data: unknown, log: LogDecision): Promise<Verdict>;
  read(key: string, fence: number | null, log: LogDecision): Promise<ReadVerdict>;
  /** An onlooker's read: decides and logs nothing. */
  peek(key: string): Promise<{ data: unknown; maxSeen: number | null }>;
  close(): Promise<void>;
}

/**
 * The resource's own memory. Judge, log and commit run with no await between
 * them, so Node's one thread makes the decisions one at a time, in the order
 * requests finished arriving: the order of resource.ndjson is the order writes
 * took effect.
 */
export function memoryDecider(store: FencedStore): Decider {
  return {
    fencing: store.fencing,
    permits: store.rule.permits,
    async write(key, fence, data, log) {
      const j = store.judgeWrite(key, fence, data);
      const v: Verdict = { accepted: j.accepted, maxBefore: j.maxBefore, ...(j.higher === undefined ? {} : { higher: j.higher }) };
      log(v);
      store.commit(key, j.next);
      return v;
    },
    async read(key, fence, log) {
      const j = store.judgeRead(key, fence);
      const data = j.accepted ? j.next.value : null;
      log({ accepted: j.accepted, maxBefore: j.maxBefore, data });
      store.commit(key, j.next);
      return { accepted: j.accepted, maxBefore: j.maxBefore, data, maxSeen: j.next.maxSeen };
    },
    async peek(key) {
      const s = store.get(key);
      return { data: s.value, maxSeen: s.maxSeen };
    },
    async close() {},
  };
}
