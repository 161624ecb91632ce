// Running the API server as a process of its own: print where it listens, then
// serve until told to stop or orphaned. An orphaned proxy would hold its ports
// and keep faults in place for whoever comes next, so it follows its parent out
// (lib/lifeline.ts).
import { onParentGone } from "../lib/index.ts";
import { startApiServer, type RunningApiServer } from "./api.ts";

// A stuck close must not keep a process alive that was told to go.
const CLOSE_GRACE_MS = 3000;

export async function serveProxyProcess(opts: { host: string; port: number; watchStdin: boolean; toxiproxyOnly: boolean }): Promise<void> {
  const log = (line: string): void => {
    process.stderr.write(`${new Date().toISOString()} ${line}\n`);
  };
  // The watch starts before the listener: a parent that dies while we are still
  // starting must be noticed too, and the parent pid is only ours to compare with
  // while it is alive.
  let server: RunningApiServer | null = null;
  let stopping = false;
  const stop = (why: string): void => {
    if (stopping) return;
    stopping = true;
    log(`stopping: ${why}`);
    if (server === null) process.exit(0);
    setTimeout(() => process.exit(0), CLOSE_GRACE_MS).unref();
    server.close().then(
      () => process.exit(0),
      () => process.exit(0),
    );
  };
  process.once("SIGTERM", () => stop("SIGTERM"));
  process.once("SIGINT", () => stop("SIGINT"));
  onParentGone({ watchStdin: opts.watchStdin }, stop);

  server = await startApiServer({ host: opts.host, port: opts.port, log, toxiproxyOnly: opts.toxiproxyOnly });
  if (stopping) {
    await server.close().catch(() => {});
    process.exit(0);
  }
  log(`listening on ${server.url} (pid ${process.pid})`);
  process.stdout.write(`${JSON.stringify({ port: server.port })}\n`);
}
