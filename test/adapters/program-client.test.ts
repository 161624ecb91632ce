// The harness's side of lock kinds and cancel (docs/adapter-protocol.md), against
// a scripted program (fixtures/kinds.mjs): an AcquireRequest becomes the acquire's
// mode, reenter and permits; an abort while it waits sends a cancel while the
// acquire is outstanding, and the acquire's own reply says how it ended; a
// re-entry that names another owner, or an init_ok whose kinds differ from the
// manifest's, is a protocol error.
import { describe, it, expect, afterEach } from "vitest";
import { join } from "node:path";
import { loadProgramAdapter } from "../../clients/program/index.ts";
import { CANCEL_UNKNOWN, UnknownOutcome, type Hold, type LockClient } from "../../clients/lock.ts";
import { rng } from "../../lib/index.ts";
import { REPO } from "../helpers.ts";

const fixture = (name: string) => join(REPO, "test/adapters/fixtures", `${name}.adapter.json`);
const opened: LockClient[] = [];
const logged: string[] = [];

function client(manifest = "kinds"): LockClient {
  const adapter = loadProgramAdapter(fixture(manifest));
  const c = adapter.create({ id: 1, endpoints: [{ name: "zk-1", host: "127.0.0.1", port: 9 }], ownerPrefix: "c1", commandTimeoutMs: 1000, rng: rng(1, "t"), options: {}, log: (l) => logged.push(l) });
  opened.push(c);
  return c;
}

afterEach(async () => {
  await Promise.all(opened.splice(0).map((c) => c.close()));
  logged.length = 0;
});

/** The acquire of `key`, aborted once it has been sent. */
async function aborted(c: LockClient, key: string) {
  const abort = new AbortController();
  const got = c.acquire(key, 1000, 5000, { signal: abort.signal });
  await new Promise((r) => setTimeout(r, 100));
  abort.abort();
  return got;
}

describe("lock kinds and cancel through an adapter program", () => {
  it("an AcquireRequest's mode, re-entry (the outer hold's owner) and permits go in the acquire", async () => {
    const c = client();
    const asked = async (request: Parameters<LockClient["acquire"]>[3]) => {
      const r = await c.acquire("echo", 1000, 0, request);
      if (r.type !== "ok") throw new Error(JSON.stringify(r));
      return r.value;
    };
    expect((await asked({})).extra?.asked).toEqual({});
    expect((await asked({ mode: "read" })).extra?.asked).toEqual({ mode: "read" });
    expect((await asked({ permits: 3 })).extra?.asked).toEqual({ permits: 3 });
    const outer: Hold = { owner: "c1a1-h9", fence: 1, ttlMs: 1000 };
    const inner = await asked({ reenter: outer });
    expect(inner.owner).toBe("c1a1-h9");
    expect(inner.extra?.asked).toEqual({ reenter: "c1a1-h9" });
  });

  it("an abort while the acquire waits: a cancel; the acquire answers fail cancelled, error cancel-unknown, or the ok that crossed it", async () => {
    const c = client();
    await c.whenStarted?.();
    expect(await aborted(c, "wait")).toEqual({ type: "fail", error: "cancelled", value: { owner: "c1a1-h1" } });
    await expect(aborted(c, "unknown")).rejects.toSatisfy((e: unknown) => e instanceof UnknownOutcome && e.error === CANCEL_UNKNOWN);
    expect(await aborted(c, "granted")).toMatchObject({ type: "ok", value: { owner: "c1a1-h3", fence: 2 } });
    // The program goes on; the cancel's error, read after the ok it crossed, is logged, and changes no outcome.
    expect(await c.acquire("echo", 1000, 0)).toMatchObject({ type: "ok" });
    expect(logged.join("\n")).toMatch(/cancel of acquire id \d+: error no such acquire waiting/);
    // Aborted before it is sent: nothing is sent at all.
    const before = new AbortController();
    before.abort();
    expect(await c.acquire("wait", 1000, 5000, { signal: before.signal })).toEqual({ type: "fail", error: "cancelled" });
  });

  it("a re-entry's ok naming another owner, or init_ok's kinds not the manifest's: adapter-bad-line", async () => {
    const c = client();
    const outer: Hold = { owner: "c1a1-h1", fence: 1, ttlMs: 1000 };
    await expect(c.acquire("impostor", 1000, 0, { reenter: outer })).rejects.toMatchObject({
      error: "adapter-bad-line",
      message: expect.stringMatching(/a re-entry's ok must keep the owner it re-entered \("c1a1-h1"\), not "someone-else"/),
    });
    const d = client("kinds-differ");
    await expect(d.acquire("echo", 1000, 0)).rejects.toMatchObject({ error: "adapter-bad-line", message: expect.stringMatching(/answered init with "kinds" \{"rw":true\}, which its manifest does not say/) });
  });
});
