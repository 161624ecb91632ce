// Toxiproxy's HTTP API and toxics, against two servers: fencecheck's fault proxy
// and Shopify's Toxiproxy itself (v2.12.0, built by `fencecheck setup`), one
// describe.each block per target, the same cases in each, so that every
// difference in behaviour is a failing case. Where a difference is deliberate (our
// extra toxics, /metrics, the version string), the case says what each target
// answers. Real sockets on loopback, real bytes: the npm client drives every
// route, raw fetch checks every status code, error body and empty 204 body, and
// each toxic's effect is measured on connections to an echo server.
//
// Timing assertions are lower bounds with margin (and loose upper bounds only
// where "it did not happen" is the point), so a busy machine cannot fail them.
// Budget: under 20 s for the file (the toxics of a target run concurrently, each
// on proxies of its own; what resets a whole server runs alone).
import net, { type AddressInfo } from "node:net";
import { randomBytes } from "node:crypto";
import type { Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ToxiproxyError, type ICreateToxicBody, type Latency } from "toxiproxy-node-client";
import { PROXY_VERSION, TOXIPROXY_TOXICS } from "../../proxy/index.ts";
import { TOXIPROXY_VERSION } from "../../toxiproxy/index.ts";
import { portOf, sleep, startHarness, startUpstream, TARGETS, TestClient, uniqueName, type Harness, type Upstream } from "./helpers.ts";

function latency(name: string, ms: number, stream: "upstream" | "downstream" = "downstream"): ICreateToxicBody<Latency> {
  return { name, type: "latency", stream, toxicity: 1, attributes: { latency: ms, jitter: 0 } };
}

describe.each(TARGETS)("%s", (target) => {
  let h: Harness;
  let echo: Upstream;
  let upstream: string;
  // Deliberately different: each server names itself.
  const version = target === "fencecheck" ? PROXY_VERSION : TOXIPROXY_VERSION;

  beforeAll(async () => {
    h = await startHarness(target);
    echo = await startUpstream();
    upstream = `127.0.0.1:${echo.port}`;
  });

  afterAll(async () => {
    await h?.server.close();
    await echo?.close();
  });

  /** A fresh proxy in front of `to` (the echo server by default); returns its port and name. */
  async function proxyTo(to: Upstream = echo): Promise<{ name: string; port: number }> {
    const name = uniqueName("p");
    const res = await h.call("POST", "/proxies", { name, listen: "127.0.0.1:0", upstream: `127.0.0.1:${to.port}` });
    expect(res.status).toBe(201);
    return { name, port: portOf((res.json as { listen: string }).listen) };
  }

  async function addToxic(proxy: string, toxic: Record<string, unknown>): Promise<void> {
    const res = await h.call("POST", `/proxies/${proxy}/toxics`, toxic);
    expect(res.status, JSON.stringify(res.json)).toBe(200);
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

      expect(JSON.parse(await h.toxiproxy.getVersion())).toEqual({ version });

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
      // Answers are JSON; errors are JSON too, written as Go's http.Error writes them.
      expect(created.contentType).toBe("application/json");
      expect([again.contentType, again.text.endsWith("}\n")]).toEqual(["text/plain; charset=utf-8", true]);
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

    it("every toxic type Toxiproxy v2.12.0 has (TOXIPROXY_TOXICS, what --toxiproxy auto is taken to know) is taken on both streams", async () => {
      const n = uniqueName("types");
      await h.call("POST", "/proxies", { name: n, listen: "127.0.0.1:0", upstream });
      for (const type of TOXIPROXY_TOXICS)
        for (const stream of ["upstream", "downstream"]) {
          const res = await h.call("POST", `/proxies/${n}/toxics`, { type, stream });
          expect([type, stream, res.status, (res.json as { name: string }).name]).toEqual([type, stream, 200, `${type}_${stream}`]);
        }
      await h.call("DELETE", `/proxies/${n}`);
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

    it("populate: 201 with {proxies}, 400 on a bad list; a name given twice is created, then replaced", async () => {
      const n = uniqueName("s");
      const ok = await h.call("POST", "/populate", [{ name: n, listen: "127.0.0.1:0", upstream }]);
      expect(ok.status).toBe(201);
      expect(ok.json).toMatchObject({ proxies: [{ name: n, upstream, enabled: true, toxics: [] }] });
      const twice = uniqueName("s");
      const both = await h.call("POST", "/populate", [{ name: twice, listen: "127.0.0.1:0", upstream }, { name: twice, listen: "127.0.0.1:0", upstream: "127.0.0.1:9" }]);
      expect(both.status).toBe(201);
      expect((both.json as { proxies: Array<{ name: string; upstream: string }> }).proxies.map((p) => [p.name, p.upstream])).toEqual([[twice, upstream], [twice, "127.0.0.1:9"]]);
      expect((await h.call("GET", `/proxies/${twice}`)).json).toMatchObject({ upstream: "127.0.0.1:9", enabled: true });
      const notList = await h.call("POST", "/populate", { name: n });
      expect(notList.status).toBe(400);
      const noName = await h.call("POST", "/populate", [{ name: uniqueName("s"), upstream }, { upstream }]);
      expect(noName.status).toBe(400);
      // Nothing begun: the answer's proxies are null (with those done so far when one fails part way).
      expect(noName.json).toEqual({ error: "missing required field: name at proxy 2", status: 400, proxies: null });
      expect((notList.json as { proxies: unknown }).proxies).toBeNull();
    });

    it("version: 200 with {version}; unknown routes 404", async () => {
      const v = await h.call("GET", "/version");
      expect(v.status).toBe(200);
      expect(v.json).toEqual({ version });
      // As Toxiproxy's router answers: plain text for no route, no body for a method the route does not take.
      for (const path of ["/nothing", "/proxies/a/b"]) {
        const none = await h.call("GET", path);
        expect([path, none.status, none.text, none.contentType]).toEqual([path, 404, "404 page not found\n", "text/plain; charset=utf-8"]);
      }
      for (const [method, path] of [["POST", "/version"], ["PUT", "/proxies"], ["GET", "/reset"], ["PUT", `/proxies/${name}`]]) {
        const wrong = await h.call(method!, path!);
        expect([method, path, wrong.status, wrong.text]).toEqual([method, path, 405, ""]);
      }
    });
  });

  // Each case on proxies of its own, so they run at once; what resets the whole server runs after them, alone.
  describe.concurrent("toxics", () => {
    describe("latency", () => {
      it("adds at least `latency` ms to every round trip, on new and open connections", async () => {
        const p = await proxyTo();
        const open = await TestClient.open(p.port);
        // Upper bounds only say "no toxic here"; they are far from the toxic's value (and
        // from a loopback round trip) so a loaded machine cannot trip them.
        expect(await open.roundTrip("warm")).toBeLessThan(600);

        await addToxic(p.name, { type: "latency", attributes: { latency: 1000 } });
        for (let i = 0; i < 2; i++) expect(await open.roundTrip(`open${i}`)).toBeGreaterThanOrEqual(995);
        const fresh = await TestClient.open(p.port);
        expect(await fresh.roundTrip("fresh")).toBeGreaterThanOrEqual(995);

        await h.call("DELETE", `/proxies/${p.name}/toxics/latency_downstream`);
        expect(await open.roundTrip("after")).toBeLessThan(600);
        open.destroy();
        fresh.destroy();
      });

      it("an update reaches open connections", async () => {
        const p = await proxyTo();
        await addToxic(p.name, { name: "l", type: "latency", attributes: { latency: 0 } });
        const c = await TestClient.open(p.port);
        expect(await c.roundTrip("a")).toBeLessThan(600);
        await h.call("PATCH", `/proxies/${p.name}/toxics/l`, { attributes: { latency: 1000 } });
        expect(await c.roundTrip("b")).toBeGreaterThanOrEqual(995);
        c.destroy();
      });

      it("keeps bytes in order under jitter and delivers a large transfer intact", async () => {
        const p = await proxyTo();
        await addToxic(p.name, { type: "latency", attributes: { latency: 20, jitter: 15 } });
        const c = await TestClient.open(p.port);
        const parts: Buffer[] = [];
        for (let i = 0; i < 40; i++) {
          const part = Buffer.from(`<${i}>`);
          parts.push(part);
          c.write(part);
          await sleep(1);
        }
        const big = randomBytes(4 << 20); // past the flow-control high-water mark
        c.write(big);
        const expected = Buffer.concat([...parts, big]);
        const got = await c.waitForBytes(expected.length, 20_000);
        expect(got.equals(expected)).toBe(true);
        c.destroy();
      });

      it("applies to the direction named: upstream delays the server, downstream only the client", async () => {
        // An upstream of its own: the other cases, running meanwhile, connect to the shared one.
        const own = await startUpstream();
        const up = await proxyTo(own);
        await addToxic(up.name, { type: "latency", stream: "upstream", attributes: { latency: 1000 } });
        const down = await proxyTo(own);
        await addToxic(down.name, { type: "latency", stream: "downstream", attributes: { latency: 1000 } });

        for (const [p, serverDelayed] of [[up, true], [down, false]] as const) {
          // The proxy dials the echo server when the client connects: this client's
          // upstream connection is the next one the echo server accepts.
          const index = own.received.length;
          const c = await TestClient.open(p.port);
          for (let i = 0; i < 250 && own.received.length <= index; i++) await sleep(20);
          expect(own.received.length).toBe(index + 1);
          const t0 = performance.now();
          c.write("dir");
          await c.waitForBytes(3);
          const total = performance.now() - t0;
          const atServer = own.firstByteAt[index]! - t0;
          expect(total).toBeGreaterThanOrEqual(995);
          if (serverDelayed) expect(atServer).toBeGreaterThanOrEqual(995);
          else expect(atServer).toBeLessThan(600);
          c.destroy();
        }
        await own.close();
      });
    });

    describe("timeout", () => {
      it("0 holds every byte and never closes; deleting it closes the connection", async () => {
        const p = await proxyTo();
        await addToxic(p.name, { name: "hole", type: "timeout", attributes: { timeout: 0 } });
        const c = await TestClient.open(p.port);
        c.write("into the void");
        expect(await c.endedWithin(600)).toBeUndefined();
        expect(c.data.length).toBe(0);

        await h.call("DELETE", `/proxies/${p.name}/toxics/hole`);
        expect(await c.endedWithin(2000)).toBeDefined();
      });

      it("N closes the connection once N ms pass without data; each chunk starts the clock again", async () => {
        const p = await proxyTo();
        await addToxic(p.name, { type: "timeout", stream: "upstream", attributes: { timeout: 400 } });
        const c = await TestClient.open(p.port);
        // A chunk every 50 ms for 1.2 s: three times the timeout, and never closed.
        const chatter = setInterval(() => c.write("still here"), 50);
        expect(await c.endedWithin(1200)).toBeUndefined();
        clearInterval(chatter);
        const quiet = performance.now();
        const ending = await c.endedWithin(3000);
        expect(ending).toBeDefined();
        expect(ending!.at - quiet).toBeGreaterThanOrEqual(300);
        expect(c.data.length).toBe(0);
      });
    });

    describe("limit_data", () => {
      it("passes exactly `bytes` bytes, then closes", async () => {
        const p = await proxyTo();
        await addToxic(p.name, { type: "limit_data", attributes: { bytes: 10 } });
        const c = await TestClient.open(p.port);
        c.write("0123456789abcdefghij");
        const ending = await c.endedWithin(3000);
        expect(ending).toBeDefined();
        expect(c.data.toString()).toBe("0123456789");
      });
    });

    describe("reset_peer", () => {
      it("leaves an idle connection alone; swallows the first chunk and resets (ECONNRESET) `timeout` ms after it", async () => {
        const p = await proxyTo();
        await addToxic(p.name, { type: "reset_peer", stream: "upstream", attributes: { timeout: 500 } });
        const c = await TestClient.open(p.port);
        expect(await c.endedWithin(700)).toBeUndefined();
        const sent = performance.now();
        c.write("never echoed");
        const ending = await c.endedWithin(3000);
        expect(ending?.how).toBe("reset");
        expect(ending!.at - sent).toBeGreaterThanOrEqual(490);
        expect(c.data.length).toBe(0);
      });

      it("timeout 0 resets at the first chunk; deleted before any data, it spares the connection", async () => {
        const p = await proxyTo();
        await addToxic(p.name, { name: "rst", type: "reset_peer", stream: "upstream", attributes: { timeout: 0 } });
        const c = await TestClient.open(p.port);
        c.write("x");
        // The client may hear of the RST on a read (ECONNRESET) or see the socket simply closed.
        expect(await c.endedWithin(3000)).toBeDefined();
        expect(c.data.length).toBe(0);

        const spared = await TestClient.open(p.port);
        await h.call("DELETE", `/proxies/${p.name}/toxics/rst`);
        await spared.roundTrip("still fine");
        expect(spared.done).toBeUndefined();
        spared.destroy();
      });
    });

    describe("slicer", () => {
      it("delivers every byte intact and in order, in small pieces spread over time", async () => {
        const p = await proxyTo();
        await addToxic(p.name, { type: "slicer", attributes: { average_size: 20, size_variation: 10, delay: 2000 } });
        const c = await TestClient.open(p.port);
        const payload = randomBytes(1500);
        const t0 = performance.now();
        c.write(payload);
        const got = await c.waitForBytes(payload.length, 10_000);
        expect(got.equals(payload)).toBe(true);
        // About 75 pieces 2 ms apart take well over 60 ms. (How many reads the client
        // sees is up to its event loop, so it is not asserted.)
        expect(performance.now() - t0).toBeGreaterThanOrEqual(60);
        c.destroy();
      });
    });

    describe("bandwidth", () => {
      it("throttles to about `rate` KB/s", async () => {
        const p = await proxyTo();
        await addToxic(p.name, { type: "bandwidth", attributes: { rate: 100 } });
        const c = await TestClient.open(p.port);
        const payload = randomBytes(60_000); // 0.6 s at 100 KB/s
        const t0 = performance.now();
        c.write(payload);
        const got = await c.waitForBytes(payload.length, 10_000);
        expect(performance.now() - t0).toBeGreaterThanOrEqual(450);
        expect(got.equals(payload)).toBe(true);
        c.destroy();
      });
    });

    describe("slow_close", () => {
      it("delays the close by `delay` ms", async () => {
        // An upstream that greets and hangs up at once.
        const closer = await startUpstream((s: Socket) => s.end("bye"));
        const fast = await proxyTo(closer);
        const slow = await proxyTo(closer);
        await addToxic(slow.name, { type: "slow_close", attributes: { delay: 1500 } });

        let t0 = performance.now();
        const a = await TestClient.open(fast.port);
        expect((await a.endedWithin(3000))!.at - t0).toBeLessThan(750);

        t0 = performance.now();
        const b = await TestClient.open(slow.port);
        const ending = await b.endedWithin(5000);
        expect(ending?.how).toBe("end");
        expect(ending!.at - t0).toBeGreaterThanOrEqual(1490);
        expect(b.data.toString()).toBe("bye");
        await closer.close();
      });
    });

    describe("toxicity", () => {
      it("0 never applies; raising it to 1 applies to open connections", async () => {
        const p = await proxyTo();
        await addToxic(p.name, { name: "maybe", type: "latency", toxicity: 0, attributes: { latency: 1000 } });
        const clients = await Promise.all(Array.from({ length: 5 }, () => TestClient.open(p.port)));
        const times = await Promise.all(clients.map((c) => c.roundTrip("t")));
        for (const t of times) expect(t).toBeLessThan(600);
        await h.call("PATCH", `/proxies/${p.name}/toxics/maybe`, { toxicity: 1 });
        expect(await clients[0]!.roundTrip("u")).toBeGreaterThanOrEqual(995);
        for (const c of clients) c.destroy();
      });
    });
  });

  describe("enable, disable, reset", () => {
    it("a disabled proxy refuses connections; re-enabling works on the same port", async () => {
      const p = await proxyTo();
      const open = await TestClient.open(p.port);
      await open.roundTrip("before");
      await h.call("PATCH", `/proxies/${p.name}`, { enabled: false });
      expect(await open.endedWithin(2000)).toBeDefined();
      await expect(TestClient.open(p.port)).rejects.toMatchObject({ code: "ECONNREFUSED" });

      const res = await h.call("PATCH", `/proxies/${p.name}`, { enabled: true });
      expect(portOf((res.json as { listen: string }).listen)).toBe(p.port);
      const c = await TestClient.open(p.port);
      await c.roundTrip("after");
      c.destroy();
    });

    it("a client whose upstream cannot be reached is closed at once", async () => {
      const name = uniqueName("p");
      // Port 1 is privileged and no test binds it: nothing can start listening there meanwhile.
      const res = await h.call("POST", "/proxies", { name, listen: "127.0.0.1:0", upstream: "127.0.0.1:1" });
      const c = await TestClient.open(portOf((res.json as { listen: string }).listen));
      expect(await c.endedWithin(2000)).toBeDefined();
    });

    it("/reset clears toxics from open connections and re-enables proxies", async () => {
      const p = await proxyTo();
      const q = await proxyTo();
      await addToxic(p.name, { type: "latency", attributes: { latency: 1000 } });
      await h.call("PATCH", `/proxies/${q.name}`, { enabled: false });
      const c = await TestClient.open(p.port);
      expect(await c.roundTrip("slow")).toBeGreaterThanOrEqual(995);

      await h.call("POST", "/reset");
      expect(await c.roundTrip("fast")).toBeLessThan(600);
      const d = await TestClient.open(q.port);
      await d.roundTrip("back");
      c.destroy();
      d.destroy();
    });
  });

  // Each case says what each server answers: these differences are meant.
  describe("where the two differ on purpose", () => {
    it("block_from and zk_sid_only: fencecheck's own toxics; Toxiproxy answers 400 invalid toxic type", async () => {
      const p = await proxyTo();
      for (const toxic of [{ type: "block_from", stream: "upstream", attributes: { from: [] } }, { type: "zk_sid_only", stream: "upstream" }]) {
        const res = await h.call("POST", `/proxies/${p.name}/toxics`, toxic);
        if (target === "fencecheck") expect([toxic.type, res.status]).toEqual([toxic.type, 200]);
        else expect([toxic.type, res.status, res.json]).toEqual([toxic.type, 400, { error: "invalid toxic type", status: 400 }]);
      }
    });

    it("/metrics: fencecheck's serves fencecheck_proxy_* series; Toxiproxy serves none unless started with -proxy-metrics or -runtime-metrics (404)", async () => {
      const res = await h.call("GET", "/metrics");
      if (target === "fencecheck") {
        expect(res.status).toBe(200);
        expect(res.text).toMatch(/^fencecheck_proxy_connections/m);
      } else expect([res.status, res.text]).toEqual([404, "404 page not found\n"]);
    });

    it("a proxy created without listen: fencecheck's listens on 127.0.0.1 only; Toxiproxy on every address ([::])", async () => {
      const res = await h.call("POST", "/proxies", { name: uniqueName("nolisten"), upstream });
      expect(res.status).toBe(201);
      expect((res.json as { listen: string }).listen).toMatch(target === "fencecheck" ? /^127\.0\.0\.1:\d+$/ : /^\[::\]:\d+$/);
    });

    it("a proxy's JSON: the same fields, and Toxiproxy's has an empty Logger object besides (a Go field it leaks)", async () => {
      const res = await h.call("POST", "/proxies", { name: uniqueName("shape"), listen: "127.0.0.1:0", upstream });
      const keys = Object.keys(res.json as object).sort();
      expect(keys).toEqual(["enabled", "listen", "name", "toxics", "upstream", ...(target === "toxiproxy" ? ["Logger"] : [])].sort());
    });
  });
});
