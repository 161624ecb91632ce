// The resource's state in a Postgres table, and the fencing decision the
// database's: a write is one conditional `UPDATE ... WHERE fence < $f`, so two
// resource processes (or any other writer of the table) cannot let a stale
// write through between them. The row is locked first (SELECT ... FOR UPDATE)
// only to read max_before for the log; the decision is logged while that lock
// is held and before COMMIT, so for each key the log's order is the order the
// writes took effect, whichever process logged them.
import pg from "pg";
import type { Decider, LogDecision } from "./decider.ts";

export const RESOURCE_TABLE_SQL = `
CREATE TABLE IF NOT EXISTS fencecheck_resource (
  key text PRIMARY KEY,
  value jsonb,
  fence bigint
)`;

const ENSURE = `INSERT INTO fencecheck_resource (key) VALUES ($1) ON CONFLICT (key) DO NOTHING`;
const LOCK = `SELECT fence FROM fencecheck_resource WHERE key = $1 FOR UPDATE`;
// $3 null (a hold without a fence) is never fresh: NULL < x is not true.
const FENCED_WRITE = `UPDATE fencecheck_resource SET value = $2, fence = $3 WHERE key = $1 AND (fence IS NULL OR fence < $3) AND $3 IS NOT NULL`;
// Fencing off: every write lands, and the fence still records the highest seen (max_before stays meaningful).
const BLIND_WRITE = `UPDATE fencecheck_resource SET value = $2, fence = GREATEST(fence, $3) WHERE key = $1`;
const READ = `SELECT value, fence FROM fencecheck_resource WHERE key = $1`;

const asFence = (v: string | null | undefined): number | null => (v === null || v === undefined ? null : Number(v));

export interface PgDeciderOptions {
  host: string;
  port: number;
  fencing: boolean;
}

export async function pgDecider(opts: PgDeciderOptions): Promise<Decider> {
  // A pool: requests on different keys are decided at once, each in a transaction on a connection of its own.
  const pool = new pg.Pool({ host: opts.host, port: opts.port, user: "postgres", database: "postgres", max: 20 });
  pool.on("error", () => {});
  await pool.query(RESOURCE_TABLE_SQL);
  const inTransaction = async <T>(f: (c: pg.PoolClient) => Promise<T>): Promise<T> => {
    const c = await pool.connect();
    try {
      await c.query("BEGIN");
      const out = await f(c);
      await c.query("COMMIT");
      return out;
    } catch (err) {
      await c.query("ROLLBACK").catch(() => {});
      throw err;
    } finally {
      c.release();
    }
  };
  return {
    fencing: opts.fencing,
    write: (key, fence, data, log: LogDecision) =>
      inTransaction(async (c) => {
        await c.query(ENSURE, [key]);
        const maxBefore = asFence((await c.query<{ fence: string | null }>(LOCK, [key])).rows[0].fence);
        const r = await c.query(opts.fencing ? FENCED_WRITE : BLIND_WRITE, [key, JSON.stringify(data), fence]);
        const verdict = { accepted: r.rowCount === 1, maxBefore };
        log(verdict);
        return verdict;
      }),
    // A client's read is a decision too: it waits for a write in progress on the
    // key (FOR SHARE) and is logged before it lets go, so the log never shows a
    // read after a write whose value it did not see.
    read: (key, _fence, log) =>
      inTransaction(async (c) => {
        await c.query(ENSURE, [key]);
        const row = (await c.query<{ value: unknown; fence: string | null }>(`${READ} FOR SHARE`, [key])).rows[0];
        const maxSeen = asFence(row.fence);
        const data = row.value ?? null;
        log({ accepted: true, maxBefore: maxSeen, data });
        return { accepted: true, maxBefore: maxSeen, data, maxSeen };
      }),
    async peek(key) {
      const row = (await pool.query<{ value: unknown; fence: string | null }>(READ, [key])).rows[0];
      return { data: row?.value ?? null, maxSeen: asFence(row?.fence) };
    },
    close: () => pool.end(),
  };
}
