// Committed decisions (docs/history-format.md, format 2): how the resource decides
// in a store of its own (Postgres, DynamoDB) and logs only what the store did.
//
// The memory decider logs before it commits, because nothing can come between
// the two. A database can fail between them, so here the store decides and
// commits first, and the line is written afterwards, saying what the store
// answered: accepted only for a write that took effect, refused only for one it
// refused, and `accepted: null` when the store was lost during the commit (a kill,
// a reset connection) so that nobody knows. Each decision carries the `order` the
// store gave it inside the same atomic step, which puts the lines of a key in the
// order their writes took effect whatever order they were logged in.
import type { Decider, LogDecision, ReadVerdict, Verdict } from "./decider.ts";

/** The store was lost while it committed: the write may or may not have taken effect. */
export class OutcomeUnknown extends Error {}

/** What a store answered for one decision, committed. */
export interface StoreVerdict {
  accepted: boolean;
  /** The key's highest fence before the decision. */
  maxBefore: number | null;
  /** The decision's place among the key's decisions, assigned by the store where it decided. */
  order: number;
}

/**
 * A store that decides writes itself (one conditional update) and counts each
 * key's decisions. `write` throws OutcomeUnknown when the commit's outcome cannot
 * be known, and any other error when the decision certainly changed nothing.
 */
export interface DecisionStore {
  readonly fencing: boolean;
  write(key: string, fence: number | null, data: unknown): Promise<StoreVerdict>;
  /** A client's read, counted as a decision of its key: the value and the key's highest fence. */
  read(key: string): Promise<{ data: unknown; maxSeen: number | null; order: number }>;
  peek(key: string): Promise<{ data: unknown; maxSeen: number | null }>;
  close(): Promise<void>;
}

/** A Decider that logs each of the store's decisions once it is committed, or as unknown once it cannot be. */
export function committedDecider(store: DecisionStore): Decider {
  return {
    fencing: store.fencing,
    async write(key, fence, data, log: LogDecision): Promise<Verdict> {
      let v: StoreVerdict;
      try {
        v = await store.write(key, fence, data);
      } catch (e) {
        // The client hears an error (and records info); the log says nobody knows.
        if (e instanceof OutcomeUnknown) log({ accepted: null, maxBefore: null, order: null });
        throw e;
      }
      log(v);
      return v;
    },
    // A read changes no fence in these stores: one whose reply was lost is simply
    // not logged (the order it may have taken leaves a gap, which is allowed).
    async read(key, _fence, log): Promise<ReadVerdict> {
      const r = await store.read(key);
      const v = { accepted: true, maxBefore: r.maxSeen, data: r.data, order: r.order };
      log(v);
      return { ...v, maxSeen: r.maxSeen };
    },
    peek: (key) => store.peek(key),
    close: () => store.close(),
  };
}

/**
 * What a backend's store module (ResourceStore.decider, an entry point of its
 * own) exports for the resource process to decide in it: the decider, from
 * what the runner gives it as --store-config (the store's address, its table).
 */
export interface StoreDeciderModule {
  decider(config: Record<string, unknown>, fencing: boolean): Promise<Decider>;
}
