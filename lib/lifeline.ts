// The child's side of service.ts: exit with the parent. An orphaned service would
// hold its ports and keep faults in place for whoever comes next. Linux would let
// a native process ask for a signal when its parent dies (PR_SET_PDEATHSIG); Node
// cannot, so signs are watched instead: stdin closing, when the parent holds a
// pipe to it (closed by the kernel however the parent dies, SIGKILL included),
// and the parent pid changing, which is what happens to an orphan that was
// started without such a pipe.
//
// Without the stdin pipe the grandparent is watched too. `npx tsx cli/proxy.ts`
// and `npm run proxy` put tsx's launcher between npm and us, and when npm is
// killed the launcher lives on as an orphan, and so would we: seen with the
// proxy. An orphaned parent is taken as a dead one.
import { procStat } from "./owner.ts";

const POLL_MS = 250;

/** Calls `gone` once, with the reason, when the parent is seen to be gone. */
export function onParentGone(opts: { watchStdin: boolean }, gone: (why: string) => void): void {
  let fired = false;
  const fire = (why: string): void => {
    if (fired) return;
    fired = true;
    gone(why);
  };
  const parent = process.ppid;
  const grandparent = opts.watchStdin ? undefined : parentOf(parent);
  const timer = setInterval(() => {
    if (process.ppid !== parent) fire(`parent ${parent} is gone`);
    else if (grandparent !== undefined && grandparent > 1 && parentOf(parent) !== grandparent) fire(`parent ${parent} was orphaned`);
  }, POLL_MS);
  // The watch alone must not keep the process alive.
  timer.unref();
  if (opts.watchStdin) {
    process.stdin.on("end", () => fire("stdin closed"));
    process.stdin.on("close", () => fire("stdin closed"));
    process.stdin.on("error", () => fire("stdin failed"));
    process.stdin.resume();
  }
}

/** The parent pid of `pid` from /proc (Linux), or undefined where there is no /proc. */
function parentOf(pid: number): number | undefined {
  const ppid = Number(procStat(pid)?.[1]);
  return Number.isInteger(ppid) ? ppid : undefined;
}
