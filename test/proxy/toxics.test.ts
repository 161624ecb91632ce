// Each toxic's effect on real bytes between a client and an echo server on
// loopback. Timing assertions are lower bounds with margin (and loose upper bounds
// only where "it did not happen" is the point), so a busy machine cannot fail them.
import { randomBytes } from "node:crypto";
import type { Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { portOf, sleep, startHarness, startUpstream, TestClient, uniqueName, type Harness, type Upstream } from "./helpers.ts";

let h: Harness;
let echo: Upstream;

beforeAll(async () => {
  h = await startHarness();
  echo = await startUpstream();
});

afterAll(async () => {
  await h.server.close();
  await echo.close();
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
    const up = await proxyTo();
    await addToxic(up.name, { type: "latency", stream: "upstream", attributes: { latency: 1000 } });
    const down = await proxyTo();
    await addToxic(down.name, { type: "latency", stream: "downstream", attributes: { latency: 1000 } });

    for (const [p, serverDelayed] of [[up, true], [down, false]] as const) {
      // The proxy dials the echo server when the client connects: this client's
      // upstream connection is the next one the echo server accepts.
      const index = echo.received.length;
      const c = await TestClient.open(p.port);
      for (let i = 0; i < 250 && echo.received.length <= index; i++) await sleep(20);
      expect(echo.received.length).toBe(index + 1);
      const t0 = performance.now();
      c.write("dir");
      await c.waitForBytes(3);
      const total = performance.now() - t0;
      const atServer = echo.firstByteAt[index]! - t0;
      expect(total).toBeGreaterThanOrEqual(995);
      if (serverDelayed) expect(atServer).toBeGreaterThanOrEqual(995);
      else expect(atServer).toBeLessThan(600);
      c.destroy();
    }
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

  it("N closes the connection after N ms, however much the client sends", async () => {
    const p = await proxyTo();
    await addToxic(p.name, { type: "timeout", stream: "upstream", attributes: { timeout: 300 } });
    const t0 = performance.now();
    const c = await TestClient.open(p.port);
    const chatter = setInterval(() => c.write("still here"), 50);
    const ending = await c.endedWithin(3000);
    clearInterval(chatter);
    expect(ending).toBeDefined();
    expect(ending!.at - t0).toBeGreaterThanOrEqual(290);
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
  it("lets data through, then resets the connection (ECONNRESET) after the timeout", async () => {
    const p = await proxyTo();
    await addToxic(p.name, { type: "reset_peer", stream: "upstream", attributes: { timeout: 600 } });
    const t0 = performance.now();
    const c = await TestClient.open(p.port);
    await c.roundTrip("before the reset");
    const ending = await c.endedWithin(3000);
    expect(ending?.how).toBe("reset");
    expect(ending!.at - t0).toBeGreaterThanOrEqual(590);
  });

  it("timeout 0 resets at once; deleting the toxic in time spares the connection", async () => {
    const p = await proxyTo();
    await addToxic(p.name, { name: "rst", type: "reset_peer", attributes: { timeout: 0 } });
    const c = await TestClient.open(p.port);
    // No write here: a client writing while the RST lands may have the kernel hand
    // the error to the write and then read a plain EOF.
    expect((await c.endedWithin(3000))?.how).toBe("reset");

    // 2 s leave room to delete the toxic in time on a busy machine; the connection is
    // then watched until well past them.
    await h.call("PATCH", `/proxies/${p.name}/toxics/rst`, { attributes: { timeout: 2000 } });
    const opened = performance.now();
    const spared = await TestClient.open(p.port);
    await h.call("DELETE", `/proxies/${p.name}/toxics/rst`);
    expect(await spared.endedWithin(Math.max(0, opened + 2400 - performance.now()))).toBeUndefined();
    await spared.roundTrip("still fine");
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
