// Start the proxy as a child process and wait until it listens. A process of its
// own keeps the proxy's sockets off the test runner's event loop, so a paused or
// busy runner does not also pause the network it is testing.
import { entryFile, spawnService, type ServiceHandle } from "../lib/index.ts";

export type SpawnedProxyServer = ServiceHandle;

export function spawnProxyServer(opts: { port?: number; logFile?: string } = {}): Promise<SpawnedProxyServer> {
  return spawnService({
    name: "proxy server",
    main: entryFile("proxy/main"),
    args: ["--port", String(opts.port ?? 0), "--host", "127.0.0.1"],
    logFile: opts.logFile,
    readyTimeoutMs: 20_000,
    // Longer than the proxy's own grace for closing (serve.ts), so it gets to exit by itself.
    stopGraceMs: 5_000,
  });
}
