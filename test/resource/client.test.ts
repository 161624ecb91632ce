// The resource client against a real resource: outcomes it can be sure of come
// back as values, unknown ones as throws carrying a short code for the history.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ResourceClient, ResourceClientBug, ResourceUnavailable } from "../../clients/resource.ts";
import { runResource, type Running } from "./helpers.ts";

describe("ResourceClient", () => {
  let r: Running;
  beforeAll(async () => {
    r = await runResource({ fencing: true });
  });
  afterAll(() => r.close());

  it("throws a ResourceClientBug when the resource calls our request malformed, and nothing is logged", async () => {
    const client = new ResourceClient(r.handle.url);
    try {
      const logBefore = r.logText();
      await expect(client.write("k", { owner: "", fence: 1, process: 0, data: 1 })).rejects.toBeInstanceOf(ResourceClientBug);
      await expect(client.write("k", { owner: "a", fence: -1, process: 0, data: 1 })).rejects.toMatchObject({ code: "bad-request" });
      await expect(client.read("a/b", { process: 0 })).rejects.toThrow(/bad key/);
      await expect(client.write("k", { owner: "a", fence: 1, process: 0, data: "x".repeat(70_000) })).rejects.toThrow(/exceeds/);
      await expect(client.write("k", { owner: "a\nb", fence: 1, process: 0, data: 1 })).rejects.toBeInstanceOf(ResourceClientBug);
      expect(r.logText()).toBe(logBefore);
    } finally {
      client.close();
    }
  });

  it("writes and reads a key with colons (--deploy external's fencecheck:<run>:k0), logged under the key as given", async () => {
    const client = new ResourceClient(r.handle.url);
    try {
      const key = "fencecheck:20261125T091923.332Z:k0";
      expect(await client.write(key, { owner: "a", fence: 1, process: 0, data: "v" })).toMatchObject({ type: "ok", fence: 1 });
      expect(await client.read(key, { process: 0 })).toMatchObject({ type: "ok", data: "v", fence: 1 });
      expect(r.decisions().filter((d) => d.key === key).map((d) => d.op)).toEqual(["write", "read"]);
    } finally {
      client.close();
    }
  });

  it("times out on a paused resource with code timeout, per request or by default", async () => {
    const client = new ResourceClient(r.handle.url, { timeoutMs: 200 });
    try {
      await client.read("t", { process: 0 });
      process.kill(r.handle.pid, "SIGSTOP");
      const started = Date.now();
      const err = await client.write("t", { owner: "a", fence: 1, process: 0, data: 1 }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ResourceUnavailable);
      expect(err).toMatchObject({ code: "timeout" });
      // Loose, yet half the client's 5 s default: the 200 ms given here is what counted.
      expect(Date.now() - started).toBeLessThan(2_500);
      await expect(client.read("t", { process: 1 }, { timeoutMs: 50 })).rejects.toMatchObject({ code: "timeout" });
    } finally {
      process.kill(r.handle.pid, "SIGCONT");
      client.close();
    }
    // The write that timed out was delivered and decided once the resource resumed:
    // exactly why a timeout is `info`, not `fail`.
    const fresh = new ResourceClient(r.handle.url);
    expect(await fresh.read("t", { process: 2 })).toMatchObject({ type: "ok", data: 1, fence: 1 });
    fresh.close();
  });

  it("reports conn-refused when nothing listens and conn-reset when the resource dies mid-request", async () => {
    const other = await runResource({ fencing: true });
    const client = new ResourceClient(other.handle.url, { timeoutMs: 5_000 });
    try {
      // One request first, so the next one goes out on a kept-alive connection.
      await client.read("x", { process: 0 });
      process.kill(other.handle.pid, "SIGSTOP");
      const pending = client.write("x", { owner: "a", fence: 1, process: 0, data: 1 });
      await new Promise((resolve) => setTimeout(resolve, 100));
      process.kill(other.handle.pid, "SIGKILL");
      await expect(pending).rejects.toMatchObject({ code: "conn-reset" });
      await other.handle.stop();
      await expect(client.read("x", { process: 1 })).rejects.toMatchObject({ code: "conn-refused" });
    } finally {
      client.close();
      await other.close();
    }
  });
});
