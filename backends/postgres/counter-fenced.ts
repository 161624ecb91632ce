// Postgres' fence counter for a lock client whose holds carry no fence
// (--fence-source single; max-incr is the same here, on the one server): a row
// per key in fencecheck_fences, incremented and read in one statement on a
// session of its own, right after each grant (clients/counter-fenced.ts). Like
// Redis' INCR it is taken after the lock answered, so it is not ordered with
// the grants (a holder paused between the two gets a fence above the next
// holder's: fence-regression on the lock, the resource still safe).
import type { ClientContext, LockClient } from "../../clients/lock.ts";
import { CounterFenced, type FenceFetch } from "../../clients/counter-fenced.ts";
import { PgSession, accessOf, lockTables } from "./session.ts";

function postgresCounter(ctx: ClientContext): FenceFetch {
  const access = accessOf(ctx);
  const session = new PgSession(ctx.endpoints[0], ctx.commandTimeoutMs, access);
  const fences = lockTables(access.schema).fences;
  const next = `INSERT INTO ${fences} AS f (name, fence) VALUES ($1, 1) ON CONFLICT (name) DO UPDATE SET fence = f.fence + 1 RETURNING fence`;
  return {
    async next(key) {
      try {
        const r = await session.query<{ fence: string }>(next, [key]);
        return Number(r.rows[0].fence);
      } catch (err) {
        // The lock was granted whatever happened here: a hold without its fence is an
        // unknown outcome, never a fail (a refused connection would otherwise say fail).
        throw Object.assign(new Error(`the lock was granted but its fence from ${fences} could not be had: ${(err as Error).message}`), { code: "no-fence" });
      }
    },
    close: () => session.close(),
  };
}

/** INCR-like fences from the run's Postgres, for a lock that issues none. */
export const postgresFenceCounter = async () => (inner: LockClient, ctx: ClientContext, source: "single" | "max-incr") => new CounterFenced(inner, source, postgresCounter(ctx));
