// block_from, our toxic for partitioning etcd members: a connection on which a
// request says `X-Server-From: <blocked id>` is closed before that request is
// forwarded (the first request or any later one); others pass; open connections
// from a blocked member are closed when the toxic arrives or changes.
import http, { type IncomingMessage, type ServerResponse } from "node:http";
import net, { type AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { portOf, sleep, startHarness, TestClient, uniqueName, type Harness } from "./helpers.ts";
import { startProxyServer } from "../../proxy/index.ts";

let h: Harness;
let peer: http.Server;
let peerPort: number;
/** X-Server-From of every request the upstream member answered. */
const seen: string[] = [];

beforeAll(async () => {
  h = await startHarness();
  peer = http.createServer((req: IncomingMessage, res: ServerResponse) => {
    const from = String(req.headers["x-server-from"] ?? "-");
    seen.push(from);
    res.end(`hi ${from}`);
  });
  await new Promise<void>((resolve) => peer.listen(0, "127.0.0.1", resolve));
  peerPort = (peer.address() as AddressInfo).port;
});

afterAll(async () => {
  await h.server.close();
  peer.closeAllConnections();
  await new Promise<void>((resolve) => peer.close(() => resolve()));
});

function request(from?: string): string {
  return `GET /raft/stream HTTP/1.1\r\nHost: peer\r\n${from ? `X-Server-From: ${from}\r\n` : ""}Content-Length: 0\r\n\r\n`;
}

/** Send a request on `c` and wait for the answer's body `hi <from>`. */
async function ask(c: TestClient, from?: string): Promise<void> {
  const before = c.data.length;
  c.write(request(from));
  const want = `hi ${from ?? "-"}`;
  const deadline = performance.now() + 3000;
  while (!c.data.subarray(before).toString().endsWith(want)) {
    if (c.done || performance.now() > deadline) throw new Error(`no answer for ${from}: ${c.data.subarray(before).toString()}`);
    await sleep(5);
  }
}

async function proxy(): Promise<{ name: string; port: number }> {
  const name = uniqueName("peer");
  const res = await h.call("POST", "/proxies", { name, listen: "127.0.0.1:0", upstream: `127.0.0.1:${peerPort}` });
  return { name, port: portOf((res.json as { listen: string }).listen) };
}

describe("block_from", () => {
  it("is accepted as a toxic type (a real Toxiproxy would answer 400)", async () => {
    const p = await proxy();
    const res = await h.call("POST", `/proxies/${p.name}/toxics`, { type: "block_from", stream: "upstream", attributes: { from: ["a1"] } });
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ attributes: { from: ["a1"] }, name: "block_from_upstream", type: "block_from", stream: "upstream", toxicity: 1 });
    const bad = await h.call("POST", `/proxies/${p.name}/toxics`, { name: "b2", type: "block_from", attributes: { from: "a1" } });
    expect(bad.status).toBe(400);
  });

  it("refuses a blocked member without forwarding and passes everyone else", async () => {
    const p = await proxy();
    await h.call("POST", `/proxies/${p.name}/toxics`, { name: "cut", type: "block_from", attributes: { from: ["a1", "c3"] } });

    const blocked = await TestClient.open(p.port);
    const before = seen.length;
    blocked.write(request("a1"));
    expect(await blocked.endedWithin(2000)).toBeDefined();
    expect(blocked.data.length).toBe(0);

    const other = await TestClient.open(p.port);
    await ask(other, "b2");
    await ask(other, "b2"); // keep-alive: later requests pass too
    const anonymous = await TestClient.open(p.port);
    await ask(anonymous);
    expect(seen.slice(before)).toEqual(["b2", "b2", "-"]);
    other.destroy();
    anonymous.destroy();
  });

  it("holds a request whose headers arrive in pieces until it can judge it", async () => {
    const p = await proxy();
    await h.call("POST", `/proxies/${p.name}/toxics`, { type: "block_from", attributes: { from: ["a1"] } });
    const before = seen.length;
    const c = await TestClient.open(p.port);
    const text = request("a1");
    const cut = text.indexOf("X-Server");
    c.write(text.slice(0, cut));
    await sleep(100);
    c.write(text.slice(cut));
    expect(await c.endedWithin(2000)).toBeDefined();
    expect(seen.length).toBe(before);
  });

  it("closes open connections from a member once it is blocked, and lets it back after", async () => {
    const p = await proxy();
    const a1 = await TestClient.open(p.port);
    await ask(a1, "a1");
    const b2 = await TestClient.open(p.port);
    await ask(b2, "b2");

    await h.call("POST", `/proxies/${p.name}/toxics`, { name: "cut", type: "block_from", attributes: { from: ["a1"] } });
    expect(await a1.endedWithin(2000)).toBeDefined();
    await ask(b2, "b2");

    // Changing the list re-judges open connections.
    await h.call("PATCH", `/proxies/${p.name}/toxics/cut`, { attributes: { from: ["b2"] } });
    expect(await b2.endedWithin(2000)).toBeDefined();
    const again = await TestClient.open(p.port);
    await ask(again, "a1");
    again.destroy();

    await h.call("DELETE", `/proxies/${p.name}/toxics/cut`);
    const back = await TestClient.open(p.port);
    await ask(back, "b2");
    back.destroy();
  });

  it("judges every request, not just the first: a connection reused after a probe is cut", async () => {
    // etcd's probes carry no X-Server-From, and Go reuses their idle connections
    // for raft traffic that does.
    const p = await proxy();
    const c = await TestClient.open(p.port);
    await ask(c); // a probe
    await h.call("POST", `/proxies/${p.name}/toxics`, { type: "block_from", attributes: { from: ["a1"] } });
    await ask(c); // still anonymous: passes
    const before = seen.length;
    c.write(request("a1"));
    expect(await c.endedWithin(2000)).toBeDefined();
    expect(seen.length).toBe(before);
  });

  it("follows request bodies (Content-Length, chunked) and pipelined requests to the next head", async () => {
    const p = await proxy();
    await h.call("POST", `/proxies/${p.name}/toxics`, { type: "block_from", attributes: { from: ["a1"] } });
    const before = seen.length;
    const c = await TestClient.open(p.port);
    // A body that looks like a blocked request must not be taken for one.
    const fake = request("a1");
    c.write(`POST /raft HTTP/1.1\r\nHost: peer\r\nX-Server-From: b2\r\nContent-Length: ${fake.length}\r\n\r\n${fake}`);
    await c.waitForBytes(1, 2000);
    c.write(`POST /raft HTTP/1.1\r\nHost: peer\r\nTransfer-Encoding: chunked\r\n\r\n${fake.length.toString(16)}\r\n${fake}\r\n0\r\n\r\n`);
    await sleep(100);
    expect(c.done).toBeUndefined();
    // Two requests in one write: the first passes, the second (blocked) closes the connection.
    c.write(request("b2") + request("a1"));
    expect(await c.endedWithin(2000)).toBeDefined();
    expect(seen.slice(before)).toEqual(["b2", "-", "b2"]);
  });

  it("lets non-HTTP bytes through untouched", async () => {
    const p = await proxy();
    await h.call("POST", `/proxies/${p.name}/toxics`, { type: "block_from", attributes: { from: ["a1"] } });
    const c = await TestClient.open(p.port);
    // RESP, as a Redis client would send: the peer (an HTTP server) answers 400.
    c.write("*1\r\n$4\r\nPING\r\n");
    await c.waitForBytes(12, 3000);
    expect(c.data.toString()).toMatch(/^HTTP\/1\.1 400/);
  });

  it("holds nothing on a proxy without block_from: a first chunk that could begin a method passes at once (Hazelcast's HZC)", async () => {
    const got: Buffer[] = [];
    const raw = net.createServer((s) => s.on("data", (d) => got.push(d)));
    await new Promise<void>((resolve) => raw.listen(0, "127.0.0.1", resolve));
    try {
      const name = uniqueName("raw");
      const res = await h.call("POST", "/proxies", { name, listen: "127.0.0.1:0", upstream: `127.0.0.1:${(raw.address() as AddressInfo).port}` });
      const c = await TestClient.open(portOf((res.json as { listen: string }).listen));
      c.write("HZC");
      const deadline = performance.now() + 2000;
      while (Buffer.concat(got).toString() !== "HZC" && performance.now() < deadline) await sleep(5);
      expect(Buffer.concat(got).toString()).toBe("HZC");
      c.destroy();
    } finally {
      raw.close();
    }
  });

  it("toxicity 0 blocks no one", async () => {
    const p = await proxy();
    await h.call("POST", `/proxies/${p.name}/toxics`, { type: "block_from", toxicity: 0, attributes: { from: ["a1"] } });
    const c = await TestClient.open(p.port);
    await ask(c, "a1");
    c.destroy();
  });
});

describe("--toxics toxiproxy", () => {
  it("answers block_from with 400 invalid toxic type, as a real Toxiproxy does, and takes Toxiproxy's own toxics", async () => {
    const strict = await startProxyServer({ port: 0, toxiproxyOnly: true });
    try {
      const post = (path: string, body: unknown) =>
        fetch(`${strict.url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
      expect((await post("/proxies", { name: "p", listen: "127.0.0.1:0", upstream: `127.0.0.1:${peerPort}` })).status).toBe(201);
      const refused = await post("/proxies/p/toxics", { name: "gate", type: "block_from", stream: "upstream", attributes: { from: ["a"] } });
      expect(refused.status).toBe(400);
      expect(await refused.json()).toEqual({ error: "invalid toxic type", status: 400 });
      expect((await post("/proxies/p/toxics", { name: "slow", type: "latency", attributes: { latency: 10 } })).status).toBe(200);
      expect(((await (await fetch(`${strict.url}/proxies/p/toxics`)).json()) as Array<{ name: string }>).map((t) => t.name)).toEqual(["slow"]);
    } finally {
      await strict.close();
    }
  });
});
