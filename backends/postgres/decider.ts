// The resource's state in a Postgres table, and the fencing decision the
// database's: a write is one conditional `UPDATE ... WHERE fence < $f`, so two
// resource processes (or any other writer of the table) cannot let a stale
// write through between them. The row is locked first (SELECT ... FOR UPDATE) to
// read max_before, and the transaction counts the key's decisions in the row
// (`decisions`), which gives each its place; the line is logged once COMMIT has
// answered (committed.ts).
import pg from "pg";
import { committedDecider, OutcomeUnknown, type DecisionStore } from "../../resource/committed.ts";
import type { Decider } from "../../resource/decider.ts";
import type { StoreDeciderModule } from "../../resource/committed.ts";

export const RESOURCE_TABLE_SQL = `
CREATE TABLE IF NOT EXISTS fencecheck_resource (
  key text PRIMARY KEY,
  value jsonb,
  fence bigint,
  decisions bigint NOT NULL DEFAULT 0
)`;

const ENSURE = `INSERT INTO fencecheck_resource (key) VALUES ($1) ON CONFLICT (key) DO NOTHING`;
const LOCK = `SELECT fence FROM fencecheck_resource WHERE key = $1 FOR UPDATE`;
// $3 null (a hold without a fence) is never fresh: NULL < x is not true.
const FENCED_WRITE = `UPDATE fencecheck_resource SET value = $2, fence = $3, decisions = decisions + 1 WHERE key = $1 AND (fence IS NULL OR fence < $3) AND $3 IS NOT NULL RETURNING decisions`;
// Fencing off: every write lands, and the fence still records the highest seen (max_before stays meaningful).
const BLIND_WRITE = `UPDATE fencecheck_resource SET value = $2, fence = GREATEST(fence, $3), decisions = decisions + 1 WHERE key = $1 RETURNING decisions`;
// A refused write is a decision too: it takes its place.
const COUNT = `UPDATE fencecheck_resource SET decisions = decisions + 1 WHERE key = $1 RETURNING value, fence, decisions`;
const READ = `SELECT value, fence FROM fencecheck_resource WHERE key = $1`;

const asFence = (v: string | null | undefined): number | null => (v === null || v === undefined ? null : Number(v));

/**
 * Whether a failed COMMIT may still have committed: an error the server sent (a
 * DatabaseError, e.g. 57P01 at a shutdown) means it did not; a connection lost
 * while waiting for the answer means nobody knows.
 */
const serverAnswered = (e: unknown): boolean => e instanceof pg.DatabaseError;

export interface PgDeciderOptions {
  host: string;
  port: number;
  fencing: boolean;
}

export async function pgStore(opts: PgDeciderOptions): Promise<DecisionStore> {
  // A pool: requests on different keys are decided at once, each in a transaction on a connection of its own.
  const pool = new pg.Pool({ host: opts.host, port: opts.port, user: "postgres", database: "postgres", max: 20 });
  pool.on("error", () => {});
  // A connection that dies while checked out errors on its client, not the pool: unheard, that would end the process.
  pool.on("connect", (c) => c.on("error", () => {}));
  await pool.query(RESOURCE_TABLE_SQL);
  const inTransaction = async <T>(f: (c: pg.PoolClient) => Promise<T>): Promise<T> => {
    const c = await pool.connect();
    let broken = false;
    try {
      await c.query("BEGIN");
      const out = await f(c);
      try {
        await c.query("COMMIT");
      } catch (e) {
        broken = true;
        if (serverAnswered(e)) throw e;
        throw new OutcomeUnknown(`Postgres was lost during COMMIT (${(e as Error).message}): the outcome is unknown`);
      }
      return out;
    } catch (err) {
      if (!broken) await c.query("ROLLBACK").catch(() => (broken = true));
      throw err;
    } finally {
      // A connection that failed mid-commit, or could not roll back, is not handed out again (the server may be gone).
      c.release(broken);
    }
  };
  return {
    fencing: opts.fencing,
    write: (key, fence, data) =>
      inTransaction(async (c) => {
        await c.query(ENSURE, [key]);
        const maxBefore = asFence((await c.query<{ fence: string | null }>(LOCK, [key])).rows[0].fence);
        const r = await c.query<{ decisions: string }>(opts.fencing ? FENCED_WRITE : BLIND_WRITE, [key, JSON.stringify(data), fence]);
        if (r.rowCount === 1) return { accepted: true, maxBefore, order: Number(r.rows[0].decisions) };
        const counted = await c.query<{ decisions: string }>(COUNT, [key]);
        return { accepted: false, maxBefore, order: Number(counted.rows[0].decisions) };
      }),
    // A client's read waits for a write in progress on the key (the row lock COUNT
    // takes) and takes its place after it, so the log never shows a read after a
    // write whose value it did not see.
    read: (key) =>
      inTransaction(async (c) => {
        await c.query(ENSURE, [key]);
        const row = (await c.query<{ value: unknown; fence: string | null; decisions: string }>(COUNT, [key])).rows[0];
        return { data: row.value ?? null, maxSeen: asFence(row.fence), order: Number(row.decisions) };
      }),
    async peek(key) {
      const row = (await pool.query<{ value: unknown; fence: string | null }>(READ, [key])).rows[0];
      return { data: row?.value ?? null, maxSeen: asFence(row?.fence) };
    },
    close: () => pool.end(),
  };
}

export async function pgDecider(opts: PgDeciderOptions): Promise<Decider> {
  return committedDecider(await pgStore(opts));
}

/** The resource process's entry to this store (--resource, ResourceStore.decider): the config is what the store's start gave. */
export const decider: StoreDeciderModule["decider"] = (config, fencing) => pgDecider({ ...(config as Omit<PgDeciderOptions, "fencing">), fencing });
