// Starting and stopping the resource process, and making sure none is ever left
// behind: not after stop(), not after its parent is killed outright.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { ResourceClient } from "../../clients/resource.ts";
import { startResource } from "../../resource/index.ts";
import { newRunStart } from "../../store/clock.ts";
import { isGone, runResource, waitUntil } from "./helpers.ts";

const PARENT = fileURLToPath(new URL("./fixtures/parent.ts", import.meta.url));
const TSX = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;

describe("resource lifecycle", () => {
  it("stop() ends the process, even with a kept-alive connection open, and is idempotent", async () => {
    const r = await runResource({ fencing: true });
    const client = new ResourceClient(r.handle.url);
    expect(await client.write("k", { owner: "a", fence: 1, process: 0, data: 1 })).toMatchObject({ type: "ok" });
    const pid = r.handle.pid;
    expect(isGone(pid)).toBe(false);
    const started = Date.now();
    await Promise.all([r.handle.stop(), r.handle.stop()]);
    // Loose, yet below the 2 s grace after which stop() would SIGKILL a process that
    // did not exit on SIGTERM by itself.
    expect(Date.now() - started).toBeLessThan(1_900);
    expect(isGone(pid)).toBe(true);
    await r.handle.stop();
    // A kept-alive socket the server closed may answer with a reset rather than a refusal.
    const err = await client.read("k", { process: 0 }).then(() => null, (e: { code?: string }) => e);
    expect(["conn-refused", "conn-reset"]).toContain(err?.code);
    client.close();
    await r.close();
  });

  it("stop() ends a paused (SIGSTOPped) process", async () => {
    const r = await runResource({ fencing: true });
    process.kill(r.handle.pid, "SIGSTOP");
    await r.handle.stop();
    expect(isGone(r.handle.pid)).toBe(true);
    await r.close();
  });

  it("fails clearly, with the process's last words, when it exits before listening", async () => {
    const dir = mkdtempSync(join(tmpdir(), "fencecheck-resource-"));
    try {
      const start = startResource({ logPath: join(dir, "no-such-dir", "resource.ndjson"), fencing: true, t0: newRunStart() });
      await expect(start).rejects.toThrow(/exited \(code 254.*before it listened[\s\S]*cannot open --log/);
      // Its output also lands in logFile when one is given.
      const withFile = startResource({ logPath: join(dir, "x", "r.ndjson"), fencing: true, t0: newRunStart(), logFile: join(dir, "resource.log") });
      await expect(withFile).rejects.toThrow(/cannot open --log/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("fails clearly when the port is taken", async () => {
    const r = await runResource({ fencing: true });
    try {
      const start = startResource({ logPath: join(r.dir, "second.ndjson"), fencing: true, t0: newRunStart(), port: r.handle.port });
      await expect(start).rejects.toThrow(/exited \(code 255[\s\S]*EADDRINUSE/);
    } finally {
      await r.close();
    }
  });

  it.each(["handle", "bare"])("exits when its parent is SIGKILLed (%s)", async (mode) => {
    const dir = mkdtempSync(join(tmpdir(), "fencecheck-resource-"));
    const parent = spawn(process.execPath, ["--import", TSX, PARENT, mode, dir], { stdio: ["ignore", "pipe", "inherit"] });
    try {
      const line = await new Promise<string>((resolve, reject) => {
        parent.stdout.once("data", (c: Buffer) => resolve(c.toString()));
        parent.once("exit", (code) => reject(new Error(`parent exited (${code}) before printing the pid`)));
      });
      const pid = (JSON.parse(line) as { pid: number }).pid;
      expect(isGone(pid)).toBe(false);
      const parentGone = new Promise((resolve) => parent.once("exit", resolve));
      parent.kill("SIGKILL");
      await parentGone;
      await waitUntil(`resource ${pid} exits`, () => isGone(pid), 5_000);
    } finally {
      parent.kill("SIGKILL");
      rmSync(dir, { recursive: true, force: true });
    }
  }, 20_000);
});
