// Every line an adapter program writes is read here (clients/program/messages.ts):
// replies, notices, and everything that is no message, each named.
import { describe, it, expect } from "vitest";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { acquireOkProblem, readKinds, readLine, releaseOkProblem, renewOkProblem, sameKinds } from "../../clients/program/messages.ts";
import { readManifest } from "../../clients/program/manifest.ts";
import { tempRunDir } from "../helpers.ts";

describe("an adapter program's lines", () => {
  it("replies: init_ok with its capabilities, ok with its fields, fail with its error and the rest, error with its phrase", () => {
    expect(readLine('{"in_reply_to":1,"type":"init_ok","fences":true,"renew":"none","library":"kazoo 2.8.0"}')).toEqual({
      kind: "reply", inReplyTo: 1, reply: { type: "init_ok", fences: true, renew: "none", library: "kazoo 2.8.0" },
    });
    expect(readLine('{"in_reply_to":2,"type":"ok","owner":"c0a1-h1","fence":7,"extra":1}')).toEqual({ kind: "reply", inReplyTo: 2, reply: { type: "ok", fields: { owner: "c0a1-h1", fence: 7, extra: 1 } } });
    expect(readLine('{"in_reply_to":3,"type":"fail","error":"orphan-node","node":"n"}')).toEqual({ kind: "reply", inReplyTo: 3, reply: { type: "fail", error: "orphan-node", fields: { node: "n" } } });
    expect(readLine('{"type":"error","in_reply_to":4,"error":"connection lost"}')).toEqual({ kind: "reply", inReplyTo: 4, reply: { type: "error", error: "connection lost" } });
  });

  it("notices: a line without in_reply_to, with its key and owner when named", () => {
    expect(readLine('{"type":"lost","key":"k0","owner":"c1a1-h3"}')).toEqual({ kind: "notice", notice: { f: "lost", key: "k0", owner: "c1a1-h3" } });
    expect(readLine('{"type":"suspended"}')).toEqual({ kind: "notice", notice: { f: "suspended" } });
  });

  it("anything else is named for what it is", () => {
    const why = (line: string) => (readLine(line) as { why?: string }).why;
    expect(why("connected to redis")).toBe("not JSON");
    expect(why("[1,2]")).toBe("not a JSON object");
    expect(why('{"in_reply_to":1}')).toBe('no "type"');
    expect(why('{"type":"ok"}')).toMatch(/a line without "in_reply_to" must be a notice \(lost, suspended, reconnected\), not type "ok"/);
    expect(why('{"type":"lost","owner":7}')).toBe(`a notice's "owner" must be a string`);
    expect(why('{"in_reply_to":"1","type":"ok"}')).toBe(`"in_reply_to" must be an integer`);
    expect(why('{"in_reply_to":1,"type":"init_ok","fences":"yes","renew":"none"}')).toMatch(/init_ok needs "fences"/);
    expect(why('{"in_reply_to":1,"type":"init_ok","fences":true,"renew":"sometimes"}')).toMatch(/init_ok needs "renew" \(explicit, automatic, none\)/);
    expect(why('{"in_reply_to":1,"type":"fail"}')).toMatch(/a fail reply needs "error"/);
    expect(why('{"in_reply_to":1,"type":"granted"}')).toMatch(/unknown reply type "granted"/);
  });

  it("an ok's fields, checked per request", () => {
    expect(acquireOkProblem({ owner: "o", fence: 3 }, true)).toBeNull();
    expect(acquireOkProblem({ owner: "o", fence: null }, false)).toBeNull();
    expect(acquireOkProblem({ fence: 3 }, true)).toMatch(/needs "owner"/);
    expect(acquireOkProblem({ owner: "o" }, false)).toMatch(/needs "fence"/);
    expect(acquireOkProblem({ owner: "o", fence: 1.5 }, false)).toMatch(/integer or null/);
    expect(acquireOkProblem({ owner: "o", fence: null }, true)).toMatch(/"fences": true/);
    expect(renewOkProblem({ ttl_ms: -1 })).toMatch(/ttl_ms/);
    expect(renewOkProblem({})).toBeNull();
    expect(releaseOkProblem({ released: "yes" })).toMatch(/"released" must be true or false/);
    expect(releaseOkProblem({ released: false, lost: "session-expired" })).toBeNull();
  });

  it("lock kinds: in the protocol's words, read into LockKinds; init_ok may repeat them; anything else named", () => {
    expect(readKinds({ reentrant: { fence_on_reentry: "same" }, rw: true, semaphore: false, cancel: true, later: 1 })).toEqual({ reentrant: { fenceOnReentry: "same" }, rw: true, cancel: true });
    expect(readKinds({})).toEqual({});
    expect(readKinds([])).toMatch(/"kinds" must be an object/);
    expect(readKinds({ reentrant: true })).toMatch(/"kinds"."reentrant" must be \{"fence_on_reentry": "same"\}/);
    expect(readKinds({ reentrant: { fence_on_reentry: "old" } })).toMatch(/fence_on_reentry/);
    expect(readKinds({ rw: "yes" })).toBe(`"kinds"."rw" must be true or false`);
    expect(sameKinds({ rw: true }, { rw: true, semaphore: undefined })).toBe(true);
    expect(sameKinds({ reentrant: { fenceOnReentry: "same" } }, { reentrant: { fenceOnReentry: "new" } })).toBe(false);
    expect(readLine('{"in_reply_to":1,"type":"init_ok","fences":true,"renew":"none","kinds":{"rw":true,"cancel":true}}')).toEqual({
      kind: "reply", inReplyTo: 1, reply: { type: "init_ok", fences: true, renew: "none", kinds: { rw: true, cancel: true } },
    });
    expect((readLine('{"in_reply_to":1,"type":"init_ok","fences":true,"renew":"none","kinds":{"semaphore":2}}') as { why?: string }).why).toBe(`init_ok's "kinds"."semaphore" must be true or false`);
  });

  it("a re-entry's ok keeps the owner it re-entered", () => {
    expect(acquireOkProblem({ owner: "o", fence: 3 }, true, "o")).toBeNull();
    expect(acquireOkProblem({ owner: "p", fence: 3 }, true, "o")).toMatch(/a re-entry's ok must keep the owner it re-entered \("o"\), not "p"/);
  });

  it("a manifest's kinds: absent, a mutex that cannot cancel; wrong, refused naming the field", () => {
    const dir = tempRunDir("fc-manifest-kinds-");
    const base = { protocol: 1, describe: "x", command: ["x"], backends: ["zookeeper"], fences: true, renew: "none" };
    const write = (name: string, o: unknown) => {
      writeFileSync(join(dir, name), JSON.stringify(o));
      return join(dir, name);
    };
    expect(readManifest(write("plain.json", base)).kinds).toEqual({});
    expect(readManifest(write("kinds.json", { ...base, kinds: { reentrant: { fence_on_reentry: "new" }, cancel: true } })).kinds).toEqual({ reentrant: { fenceOnReentry: "new" }, cancel: true });
    expect(() => readManifest(write("bad.json", { ...base, kinds: { rw: 1 } }))).toThrow(/bad\.json: "kinds"."rw" must be true or false/);
  });
});
