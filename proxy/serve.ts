// Running the API server as a process of its own: print where it listens, then
// serve until told to stop or orphaned. An orphaned proxy would hold its ports
// and keep faults in place for whoever comes next, so it must not outlive its
// parent. Linux could signal a native child when its parent dies
// (PR_SET_PDEATHSIG); Node cannot ask for that, so signs are watched: stdin
// closing, when the parent holds a pipe to it (the kernel closes it however the
// parent dies), and the parent pid changing.
//
// Without the stdin pipe the grandparent is watched too. `npx tsx cli/proxy.ts`
// and `npm run proxy` put tsx's launcher between npm and us, and when npm is
// killed the launcher lives on as an orphan, and so would we: seen here. An
// orphaned parent is taken as a dead one.
import { readFileSync } from "node:fs";
import { startApiServer } from "./api.ts";

const PARENT_POLL_MS = 250;
// A stuck close must not keep a process alive that was told to go.
const CLOSE_GRACE_MS = 3000;

export async function serveProxyProcess(opts: { host: string; port: number; watchStdin: boolean }): Promise<void> {
  const log = (line: string): void => {
    process.stderr.write(`${new Date().toISOString()} ${line}\n`);
  };
  const server = await startApiServer({ host: opts.host, port: opts.port, log });
  log(`listening on ${server.url} (pid ${process.pid})`);
  process.stdout.write(`${JSON.stringify({ port: server.port })}\n`);

  let stopping = false;
  const stop = (why: string): void => {
    if (stopping) return;
    stopping = true;
    log(`stopping: ${why}`);
    setTimeout(() => process.exit(0), CLOSE_GRACE_MS).unref();
    server.close().then(
      () => process.exit(0),
      () => process.exit(0),
    );
  };
  process.once("SIGTERM", () => stop("SIGTERM"));
  process.once("SIGINT", () => stop("SIGINT"));

  const parent = process.ppid;
  const grandparent = opts.watchStdin ? undefined : parentOf(parent);
  setInterval(() => {
    if (process.ppid !== parent) stop(`parent ${parent} is gone`);
    else if (grandparent !== undefined && grandparent > 1 && parentOf(parent) !== grandparent) stop(`parent ${parent} was orphaned`);
  }, PARENT_POLL_MS).unref();
  if (opts.watchStdin) {
    process.stdin.on("end", () => stop("stdin closed"));
    process.stdin.on("close", () => stop("stdin closed"));
    process.stdin.on("error", () => stop("stdin failed"));
    process.stdin.resume();
  }
}

/** The parent pid of `pid` from /proc (Linux), or undefined where there is no /proc. */
function parentOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so split after the last ")".
    const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
    return Number.isInteger(ppid) ? ppid : undefined;
  } catch {
    return undefined;
  }
}
