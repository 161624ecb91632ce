// The ShedLock adapter programs (adapters/java/shedlock/) against a real Postgres and
// a real Redis, driven hold by hold through the adapter protocol, where a run under
// faults would find the same things only by chance: a taken lock fails at once
// (ShedLock never waits); a holder whose lockAtMostFor has run out releases late, after
// the next holder was granted. The Redis provider's unlock is a DEL that does not check
// the value, so the late release frees the next holder's lock and a third client is
// granted while that holder's lease still runs; the JDBC provider's unlock names
// locked_by, so it leaves the next holder's row alone, unless every program writes the
// same host name (ShedLock's default, --locked-by host), when it frees it too. The
// Redis provider's safeUpdate (--safe-update) makes its unlock compare the value.
import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { readFileSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { buildEnvironment } from "../../clients/program/environment.ts";
import { programAdapter, readManifest } from "../../clients/program/index.ts";
import type { LockClient } from "../../clients/lock.ts";
import type { ServerNode } from "../../cluster/cluster.ts";
import { rng, sleep } from "../../lib/index.ts";
import { useRedisServer } from "../../backends/redis/test/server.ts";
import { usePostgresServer } from "../../backends/postgres/test/server.ts";
import { REPO, tempRunDir } from "../helpers.ts";

const DIR = join(REPO, "adapters/java/shedlock");
const manifest = (client: string) => join(DIR, `${client}.adapter.json`);
const opened: LockClient[] = [];
const closeAll = () => Promise.all(opened.splice(0).map((c) => c.close()));

/** The shipped manifest's program with more arguments, its environment still the shipped pom (and so built once). */
function variant(client: string, args: string[]): string {
  const spec = JSON.parse(readFileSync(manifest(client), "utf8")) as { command: string[] };
  const dir = tempRunDir("fc-shedlock-manifest-");
  const path = join(dir, `${client}-variant.adapter.json`);
  writeFileSync(path, JSON.stringify({ ...spec, command: ["sh", join(DIR, "../jvm.sh"), ...spec.command.slice(2), ...args], environment: relative(dir, join(DIR, "pom.xml")) }));
  return path;
}

let n = 0;
function client(path: string, node: () => ServerNode): LockClient {
  const { host, port, name } = node();
  const c = programAdapter(readManifest(path)).create({ id: ++n, endpoints: [{ name, host, port }], ownerPrefix: `t${n}`, commandTimeoutMs: 3000, ttlMs: 300, rng: rng(n, "shedlock"), options: {} });
  opened.push(c);
  return c;
}

beforeAll(async () => {
  const built = await buildEnvironment(manifest("shedlock-jdbc"), join(DIR, "pom.xml"));
  if (!built.ok) throw new Error(built.message);
}, 300_000);

/**
 * A holds k with a 300 ms lease and lets it run out; B is granted k for 20 s; A releases
 * late. Then C tries k: what it gets says what A's late release did to B's hold.
 */
async function lateRelease(a: LockClient, b: LockClient, c: LockClient, key = "k") {
  const first = await a.acquire(key, 300, 2000);
  expect(first.type).toBe("ok");
  await sleep(600);
  const second = await b.acquire(key, 20_000, 2000);
  expect(second.type).toBe("ok");
  const late = await a.release(key, (first as { value: Parameters<LockClient["release"]>[1] }).value);
  // The adapter cannot see what unlock() did; it says the lease it was granted had run out.
  expect(late).toMatchObject({ type: "ok", value: { released: false, lost: "lease-expired" } });
  const t0 = performance.now();
  const third = await c.acquire(key, 20_000, 5000);
  return { third, ms: performance.now() - t0 };
}

describe("shedlock-redis", () => {
  const redis = useRedisServer(closeAll);
  afterAll(closeAll);

  it("a late holder's unlock DELs the next holder's key: a third client is granted while the second's lease runs", async () => {
    const [a, b, c] = [0, 1, 2].map(() => client(manifest("shedlock-redis"), redis));
    const { third } = await lateRelease(a, b, c);
    expect(third.type).toBe("ok");
  }, 60_000);

  it("with the provider's safeUpdate (--safe-update, not ShedLock's default) the late unlock compares the value and leaves the key: the third fails busy", async () => {
    const path = variant("shedlock-redis", ["--safe-update"]);
    const [a, b, c] = [0, 1, 2].map(() => client(path, redis));
    // A key of its own: the test above left "k" held for 20 s.
    const { third } = await lateRelease(a, b, c, "k-safe");
    expect(third).toEqual({ type: "fail", error: "busy" });
  }, 60_000);
});

describe("shedlock-jdbc and shedlock-jdbc-dbtime", () => {
  const pg = usePostgresServer(closeAll);
  const node = () => pg.node();
  afterAll(closeAll);

  for (const name of ["shedlock-jdbc", "shedlock-jdbc-dbtime"])
    it(`${name}: a late holder's unlock names its own locked_by and leaves the next holder's row; the third client fails busy at once, though it would wait 5 s`, async () => {
      await pg.sql("DELETE FROM shedlock");
      const [a, b, c] = [0, 1, 2].map(() => client(manifest(name), node));
      const { third, ms } = await lateRelease(a, b, c);
      expect(third).toEqual({ type: "fail", error: "busy" });
      // Well short of the 5 s it would wait: "at once" is the JVM's answer time,
      // 2.2 s in a fresh-clone run with both cores busy.
      expect(ms).toBeLessThan(4000);
      const rows = await pg.sql<{ locked_by: string }>("SELECT locked_by FROM shedlock WHERE name = 'k'");
      expect(rows.length).toBe(1);
      // The second holder's, named as a host of its own: <host>/<its owner prefix>.
      expect(rows[0].locked_by).toMatch(/^[^/]+\/t\d+a1$/);
    }, 60_000);

  it("shedlock-jdbc with ShedLock's default locked_by (the host name, one for every program here): the late unlock frees the next holder's row", async () => {
    await pg.sql("DELETE FROM shedlock");
    const path = variant("shedlock-jdbc", ["--locked-by", "host"]);
    const [a, b, c] = [0, 1, 2].map(() => client(path, node));
    const { third } = await lateRelease(a, b, c);
    expect(third.type).toBe("ok");
  }, 60_000);
});
