// The proxy as a process: spawnProxyServer, proxy/main.ts and cli/proxy.ts. It
// reports its port, obeys SIGTERM, leaves no orphan when its parent dies, and
// answers bad options with exit 254.
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { Toxiproxy } from "toxiproxy-node-client";
import { spawnProxyServer } from "../../proxy/index.ts";
import { freePort, sleep } from "./helpers.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
// The built command and service, as `npm run proxy` and the runner start them.
// `fencecheck proxy`, as the built bin runs it.
const CLI = join(ROOT, "dist/cli/fencecheck.js");
const MAIN = join(ROOT, "dist/proxy/main.js");
const dir = mkdtempSync(join(tmpdir(), "fencecheck-proxy-"));

afterAll(() => rmSync(dir, { recursive: true, force: true }));

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function gone(pid: number, withinMs: number): Promise<boolean> {
  const deadline = Date.now() + withinMs;
  while (Date.now() < deadline) {
    if (!alive(pid)) return true;
    await sleep(50);
  }
  return !alive(pid);
}

function run(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("exit", (code) => resolve({ code, stdout, stderr }));
  });
}

function firstLine(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = "";
    child.stdout!.on("data", (d: Buffer) => {
      out += d.toString();
      const nl = out.indexOf("\n");
      if (nl >= 0) resolve(out.slice(0, nl));
    });
    child.once("exit", () => reject(new Error(`exited before a line; stdout ${out}`)));
  });
}

describe("spawnProxyServer", () => {
  it("starts a child that answers the API, logs, and stops", async () => {
    const logFile = join(dir, "proxy.log");
    const server = await spawnProxyServer({ logFile });
    expect(server.port).toBeGreaterThan(0);
    const toxiproxy = new Toxiproxy(server.url);
    const proxy = await toxiproxy.createProxy({ name: "x", listen: "127.0.0.1:0", upstream: "127.0.0.1:1" });
    expect(proxy.enabled).toBe(true);
    expect(alive(server.pid)).toBe(true);

    await server.stop();
    expect(alive(server.pid)).toBe(false);
    const log = readFileSync(logFile, "utf8");
    expect(log).toMatch(/listening on/);
    expect(log).toMatch(/POST \/proxies 201/);
    expect(log).toMatch(/stopping: SIGTERM/);
  });

  it("rejects when the port is taken, naming the reason", async () => {
    const first = await spawnProxyServer();
    await expect(spawnProxyServer({ port: first.port })).rejects.toThrow(/exited \(code 255.*before it listened[\s\S]*EADDRINUSE/);
    await first.stop();
  });
});

describe("proxy/main.ts and fencecheck proxy", () => {
  it("--help exits 0; bad options exit 254 with a message", async () => {
    const help = await run([CLI, "proxy", "--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/usage: .*--port N/);
    expect(help.stdout).toMatch(/18474/);

    for (const bad of [["--port", "abc"], ["--port", "70000"], ["--bogus"], ["extra"]]) {
      const res = await run([CLI, "proxy", ...bad]);
      expect([bad, res.code]).toEqual([bad, 254]);
      expect(res.stderr.length).toBeGreaterThan(0);
    }
    expect((await run([MAIN, "--port", "-1"])).code).toBe(254);
  });

  it("the CLI prints {\"port\":N} and exits 0 on SIGTERM", async () => {
    const port = await freePort();
    const child = spawn(process.execPath, [CLI, "proxy", "--port", String(port)], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
    expect(JSON.parse(await firstLine(child))).toEqual({ port });
    const version = await fetch(`http://127.0.0.1:${port}/version`);
    expect(version.status).toBe(200);
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    child.kill("SIGTERM");
    expect(await exited).toBe(0);
  });

  it("exits when its parent dies (SIGKILL), with and without a stdin pipe, and when its launcher is orphaned", async () => {
    // A node parent that uses spawnProxyServer (the child watches the stdin pipe
    // the parent holds) and a shell parent that starts main.ts on /dev/null (the
    // child can only notice its parent pid change). Both print the proxy's pid.
    const nodeParent = spawn(
      process.execPath,
      [
        "--import",
        "tsx",
        "--input-type=module",
        "-e",
        `import { spawnProxyServer } from ${JSON.stringify(join(ROOT, "proxy/index.ts"))};
         const s = await spawnProxyServer();
         console.log(s.pid);
         setInterval(() => {}, 1000);`,
      ],
      { cwd: ROOT, stdio: ["ignore", "pipe", "inherit"] },
    );
    // The shells' proxies print their port into files, so the test knows when they listen.
    const portFiles = [join(dir, "orphan-shell.out"), join(dir, "orphan-inner.out")];
    const shellParent = spawn("bash", ["-c", `"${process.execPath}" "${MAIN}" --port 0 < /dev/null > "${portFiles[0]}" & echo "$!"; wait`], {
      cwd: ROOT,
      stdio: ["ignore", "pipe", "ignore"],
    });
    // A launcher between us and the parent that dies (as tsx's is under npx):
    // the inner shell lives on, orphaned, and the proxy must not.
    const inner = `"${process.execPath}" "${CLI}" proxy --port 0 < /dev/null > "${portFiles[1]}" & echo "$!"; wait`;
    const grandParent = spawn("bash", ["-c", `bash -c '${inner}' & wait`], { cwd: ROOT, stdio: ["ignore", "pipe", "ignore"] });
    const pids = (await Promise.all([firstLine(nodeParent), firstLine(shellParent), firstLine(grandParent)])).map(Number);
    try {
      // Killed only once every proxy listens: dying before that is another case.
      const listening = (f: string): boolean => existsSync(f) && readFileSync(f, "utf8").includes('{"port"');
      for (let waited = 0; !portFiles.every(listening) && waited < 30_000; waited += 50) await sleep(50);
      expect(portFiles.every(listening)).toBe(true);
      for (const pid of pids) expect(alive(pid)).toBe(true);

      nodeParent.kill("SIGKILL");
      shellParent.kill("SIGKILL");
      grandParent.kill("SIGKILL");
      for (const pid of pids) expect(await gone(pid, 5000)).toBe(true);
    } finally {
      // Should the test fail, leave nothing running.
      for (const pid of pids) if (alive(pid)) process.kill(pid, "SIGKILL");
    }
  });
});
