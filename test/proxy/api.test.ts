// The HTTP API against Toxiproxy's contract: the npm client drives every route it
// has, and raw fetch checks every status code, error body and empty 204 body.
import net, { type AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ToxiproxyError, type ICreateToxicBody, type Latency } from "toxiproxy-node-client";
import { VERSION as PROXY_VERSION } from "../../proxy/api.ts";
import { portOf, startHarness, startUpstream, TestClient, uniqueName, type Harness, type Upstream } from "./helpers.ts";

let h: Harness;
let echo: Upstream;
let upstream: string;

beforeAll(async () => {
  h = await startHarness();
  echo = await startUpstream();
  upstream = `127.0.0.1:${echo.port}`;
});

afterAll(async () => {
  await h.server.close();
  await echo.close();
});

function latency(name: string, ms: number, stream: "upstream" | "downstream" = "downstream"): ICreateToxicBody<Latency> {
  return { name, type: "latency", stream, toxicity: 1, attributes: { latency: ms, jitter: 0 } };
}

describe("the npm client drives every route", () => {
  it("createProxy, get, getAll, getVersion", async () => {
    const name = uniqueName("c");
    const proxy = await h.toxiproxy.createProxy({ name, listen: "127.0.0.1:0", upstream });
    expect(proxy.name).toBe(name);
    expect(proxy.enabled).toBe(true);
    expect(proxy.upstream).toBe(upstream);
    // Port 0 picks a port; the answer shows the real one.
    expect(portOf(proxy.listen)).toBeGreaterThan(0);
    expect(proxy.listen).toMatch(/^127\.0\.0\.1:\d+$/);

    const again = await h.toxiproxy.get(name);
    expect(again.toJson()).toEqual(proxy.toJson());
    const all = await h.toxiproxy.getAll();
    expect(all[name]?.listen).toBe(proxy.listen);

    const version = JSON.parse(await h.toxiproxy.getVersion()) as { version: string };
    expect(version.version).toBe(PROXY_VERSION);

    // And it forwards.
    const c = await TestClient.open(portOf(proxy.listen));
    await c.roundTrip("ping");
    c.destroy();
  });

  it("populate creates, keeps and replaces", async () => {
    const a = uniqueName("pa");
    const b = uniqueName("pb");
    const first = await h.toxiproxy.populate([
      { name: a, listen: "127.0.0.1:0", upstream },
      { name: b, listen: "127.0.0.1:0", upstream, enabled: false },
    ]);
    expect(Object.keys(first).sort()).toEqual([a, b].sort());
    expect(first[a]!.enabled).toBe(true);
    expect(first[b]!.enabled).toBe(false);
    await first[a]!.addToxic(latency("keep_me", 1));

    // Same address and upstream: the proxy stays, with its port and toxics.
    const second = await h.toxiproxy.populate([{ name: a, listen: first[a]!.listen, upstream }]);
    expect(second[a]!.listen).toBe(first[a]!.listen);
    expect((await h.call("GET", `/proxies/${a}/toxics`)).json).toHaveLength(1);

    // A new upstream replaces it (and its toxics).
    const other = await startUpstream();
    const third = await h.toxiproxy.populate([{ name: a, listen: "127.0.0.1:0", upstream: `127.0.0.1:${other.port}` }]);
    expect(third[a]!.upstream).toBe(`127.0.0.1:${other.port}`);
    expect((await h.call("GET", `/proxies/${a}/toxics`)).json).toEqual([]);
    await other.close();
  });

  it("Proxy.update disables and re-enables on the same port", async () => {
    const proxy = await h.toxiproxy.createProxy({ name: uniqueName("u"), listen: "127.0.0.1:0", upstream });
    const port = portOf(proxy.listen);
    const open = await TestClient.open(port);
    await open.roundTrip("a");

    const off = await proxy.update({ enabled: false, listen: proxy.listen, upstream });
    expect(off.enabled).toBe(false);
    // Disabling closes every connection and the listener.
    expect((await open.endedWithin(2000))?.how).toBeDefined();
    await expect(TestClient.open(port)).rejects.toMatchObject({ code: "ECONNREFUSED" });

    const on = await off.update({ enabled: true, listen: off.listen, upstream });
    expect(on.enabled).toBe(true);
    expect(on.listen).toBe(proxy.listen);
    const c = await TestClient.open(port);
    await c.roundTrip("b");
    c.destroy();
  });

  it("addToxic, getToxic, Toxic.update, Toxic.remove, Proxy.remove", async () => {
    const name = uniqueName("t");
    const proxy = await h.toxiproxy.createProxy({ name, listen: "127.0.0.1:0", upstream });
    const toxic = await proxy.addToxic(latency("lat", 10));
    expect(toxic.toJson()).toEqual({ name: "lat", type: "latency", stream: "downstream", toxicity: 1, attributes: { latency: 10, jitter: 0 } });

    const fetched = await proxy.getToxic<Latency>("lat");
    expect(fetched.toJson()).toEqual(toxic.toJson());

    const updated = await fetched.update({ ...fetched.toJson(), toxicity: 0.5, attributes: { latency: 20, jitter: 5 } });
    expect(updated.attributes).toEqual({ latency: 20, jitter: 5 });
    expect(updated.toxicity).toBe(0.5);

    await updated.remove();
    await expect(proxy.getToxic("lat")).rejects.toBeInstanceOf(ToxiproxyError);

    await proxy.remove();
    await expect(h.toxiproxy.get(name)).rejects.toBeInstanceOf(ToxiproxyError);
  });

  it("reset enables every proxy and removes every toxic", async () => {
    const p1 = await h.toxiproxy.createProxy({ name: uniqueName("r"), listen: "127.0.0.1:0", upstream });
    const p2 = await h.toxiproxy.createProxy({ name: uniqueName("r"), listen: "127.0.0.1:0", upstream });
    await p1.addToxic({ name: "hole", type: "timeout", stream: "upstream", toxicity: 1, attributes: { timeout: 0 } });
    await p1.addToxic(latency("slow", 3000));
    await p2.update({ enabled: false, listen: p2.listen, upstream });

    await h.toxiproxy.reset();

    const all = await h.toxiproxy.getAll();
    for (const p of [p1, p2]) {
      expect(all[p.name]?.enabled).toBe(true);
      expect((await h.call("GET", `/proxies/${p.name}`)).json).toMatchObject({ toxics: [] });
      const c = await TestClient.open(portOf(p.listen));
      expect(await c.roundTrip("x")).toBeLessThan(1500); // the 3 s latency is gone
      c.destroy();
    }
  });
});

describe("status codes and bodies", () => {
  let name: string;
  beforeAll(async () => {
    name = uniqueName("s");
    await h.toxiproxy.createProxy({ name, listen: "127.0.0.1:0", upstream });
  });

  it("201 for a new proxy, 409 for an existing one", async () => {
    const n = uniqueName("s");
    const created = await h.call("POST", "/proxies", { name: n, listen: "127.0.0.1:0", upstream });
    expect(created.status).toBe(201);
    expect(created.json).toMatchObject({ name: n, enabled: true, upstream, toxics: [] });
    const again = await h.call("POST", "/proxies", { name: n, listen: "127.0.0.1:0", upstream });
    expect(again.status).toBe(409);
    expect(again.json).toEqual({ error: "proxy already exists", status: 409 });
  });

  it("400 for a missing name or upstream, bad JSON, an empty body", async () => {
    const noName = await h.call("POST", "/proxies", { listen: "127.0.0.1:0", upstream });
    expect(noName.status).toBe(400);
    expect(noName.json).toEqual({ error: "missing required field: name", status: 400 });
    const noUpstream = await h.call("POST", "/proxies", { name: uniqueName("s"), listen: "127.0.0.1:0" });
    expect(noUpstream.json).toEqual({ error: "missing required field: upstream", status: 400 });
    for (const body of ["{not json", "", "[1,2]", '{"name": 5, "upstream": "x:1"}']) {
      const bad = await h.call("POST", "/proxies", body);
      expect(bad.status).toBe(400);
      expect((bad.json as { error: string }).error).toMatch(/^bad request body/);
      expect((bad.json as { status: number }).status).toBe(400);
    }
  });

  it("500 when the listen port is taken", async () => {
    const taken = net.createServer();
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
    const port = (taken.address() as AddressInfo).port;
    const res = await h.call("POST", "/proxies", { name: uniqueName("s"), listen: `127.0.0.1:${port}`, upstream });
    expect(res.status).toBe(500);
    expect(res.json).toMatchObject({ status: 500 });
    expect((res.json as { error: string }).error).toMatch(/EADDRINUSE|in use/);
    await new Promise<void>((resolve) => taken.close(() => resolve()));
  });

  it("404 for unknown proxies on every proxy route", async () => {
    const notFound = { error: "proxy not found", status: 404 };
    for (const [method, path, body] of [
      ["GET", "/proxies/nope", undefined],
      ["POST", "/proxies/nope", { enabled: false }],
      ["PATCH", "/proxies/nope", { enabled: false }],
      ["DELETE", "/proxies/nope", undefined],
      ["GET", "/proxies/nope/toxics", undefined],
      ["POST", "/proxies/nope/toxics", { type: "latency" }],
      ["GET", "/proxies/nope/toxics/t", undefined],
      ["PATCH", "/proxies/nope/toxics/t", { attributes: {} }],
      ["DELETE", "/proxies/nope/toxics/t", undefined],
    ] as const) {
      const res = await h.call(method, path, body);
      expect([method, path, res.status]).toEqual([method, path, 404]);
      expect(res.json).toEqual(notFound);
    }
  });

  it("404 for unknown toxics", async () => {
    const notFound = { error: "toxic not found", status: 404 };
    for (const method of ["GET", "POST", "PATCH", "DELETE"]) {
      const res = await h.call(method, `/proxies/${name}/toxics/nope`, method === "GET" || method === "DELETE" ? undefined : { attributes: {} });
      expect(res.status).toBe(404);
      expect(res.json).toEqual(notFound);
    }
  });

  it("toxic creation: 200 with defaults, 400 bad type or stream, 409 exists", async () => {
    const created = await h.call("POST", `/proxies/${name}/toxics`, { type: "latency", attributes: { latency: 5 } });
    // 200, not 201, as Toxiproxy; default stream downstream, toxicity 1, name <type>_<stream>.
    expect(created.status).toBe(200);
    expect(created.json).toEqual({ attributes: { latency: 5, jitter: 0 }, name: "latency_downstream", type: "latency", stream: "downstream", toxicity: 1 });

    const dup = await h.call("POST", `/proxies/${name}/toxics`, { type: "latency" });
    expect(dup.status).toBe(409);
    expect(dup.json).toEqual({ error: "toxic already exists", status: 409 });

    const badType = await h.call("POST", `/proxies/${name}/toxics`, { type: "teleport" });
    expect(badType.status).toBe(400);
    expect(badType.json).toEqual({ error: "invalid toxic type", status: 400 });

    const badStream = await h.call("POST", `/proxies/${name}/toxics`, { type: "latency", stream: "sideways" });
    expect(badStream.status).toBe(400);
    expect(badStream.json).toEqual({ error: "stream was invalid, can be either upstream or downstream", status: 400 });

    const badJson = await h.call("POST", `/proxies/${name}/toxics`, "{");
    expect(badJson.status).toBe(400);
    expect((badJson.json as { error: string }).error).toMatch(/^bad request body/);

    const badAttr = await h.call("POST", `/proxies/${name}/toxics`, { type: "bandwidth", attributes: { rate: "fast" } });
    expect(badAttr.status).toBe(400);

    await h.call("DELETE", `/proxies/${name}/toxics/latency_downstream`);
  });

  it("toxic listing: upstream toxics first; update merges attributes; 204 with an empty body", async () => {
    await h.call("POST", `/proxies/${name}/toxics`, { type: "slow_close", attributes: { delay: 7 } });
    await h.call("POST", `/proxies/${name}/toxics`, { type: "slicer", stream: "upstream", attributes: { average_size: 4, size_variation: 1, delay: 10 } });
    const list = await h.call("GET", `/proxies/${name}/toxics`);
    expect(list.status).toBe(200);
    expect((list.json as Array<{ name: string }>).map((t) => t.name)).toEqual(["slicer_upstream", "slow_close_downstream"]);

    const patched = await h.call("PATCH", `/proxies/${name}/toxics/slicer_upstream`, { attributes: { delay: 99 } });
    expect(patched.status).toBe(200);
    expect(patched.json).toMatchObject({ attributes: { average_size: 4, size_variation: 1, delay: 99 }, toxicity: 1, stream: "upstream" });

    for (const t of ["slicer_upstream", "slow_close_downstream"]) {
      const del = await h.call("DELETE", `/proxies/${name}/toxics/${t}`);
      expect(del.status).toBe(204);
      expect(del.text).toBe("");
    }
  });

  it("proxy update: 200 via POST and PATCH, 400 on a bad body", async () => {
    const n = uniqueName("s");
    await h.call("POST", "/proxies", { name: n, listen: "127.0.0.1:0", upstream });
    const viaPatch = await h.call("PATCH", `/proxies/${n}`, { enabled: false });
    expect(viaPatch.status).toBe(200);
    expect(viaPatch.json).toMatchObject({ enabled: false });
    const viaPost = await h.call("POST", `/proxies/${n}`, { enabled: true });
    expect(viaPost.status).toBe(200);
    expect(viaPost.json).toMatchObject({ enabled: true });
    expect((await h.call("PATCH", `/proxies/${n}`, "nope")).status).toBe(400);
    expect((await h.call("PATCH", `/proxies/${n}`, { enabled: "yes" })).status).toBe(400);
  });

  it("DELETE proxy and POST /reset: 204 with an empty body", async () => {
    const n = uniqueName("s");
    await h.call("POST", "/proxies", { name: n, upstream });
    const del = await h.call("DELETE", `/proxies/${n}`);
    expect(del.status).toBe(204);
    expect(del.text).toBe("");
    const reset = await h.call("POST", "/reset");
    expect(reset.status).toBe(204);
    expect(reset.text).toBe("");
  });

  it("populate: 201 with {proxies}, 400 on a bad list", async () => {
    const n = uniqueName("s");
    const ok = await h.call("POST", "/populate", [{ name: n, listen: "127.0.0.1:0", upstream }]);
    expect(ok.status).toBe(201);
    expect(ok.json).toMatchObject({ proxies: [{ name: n, upstream, enabled: true, toxics: [] }] });
    const notList = await h.call("POST", "/populate", { name: n });
    expect(notList.status).toBe(400);
    const noName = await h.call("POST", "/populate", [{ name: uniqueName("s"), upstream }, { upstream }]);
    expect(noName.status).toBe(400);
    expect(noName.json).toEqual({ error: "missing required field: name at proxy 2", status: 400 });
  });

  it("version: 200 with {version}; unknown routes 404", async () => {
    const v = await h.call("GET", "/version");
    expect(v.status).toBe(200);
    expect(v.json).toEqual({ version: PROXY_VERSION });
    expect((await h.call("GET", "/nothing")).status).toBe(404);
    expect((await h.call("GET", "/proxies/a/b")).status).toBe(404);
  });
});
