// Exit with the parent. Linux would let a native process ask for a signal when its
// parent dies (PR_SET_PDEATHSIG); Node cannot, so two signs are watched instead:
// stdin closing, when the parent holds a pipe to it (closed by the kernel however
// the parent dies, SIGKILL included), and the parent pid changing, which is
// what happens to an orphan that was started without such a pipe.

const POLL_MS = 250;

export function onParentGone(opts: { watchStdin: boolean }, gone: (why: string) => void): void {
  let fired = false;
  const fire = (why: string): void => {
    if (fired) return;
    fired = true;
    gone(why);
  };
  const parent = process.ppid;
  const timer = setInterval(() => {
    if (process.ppid !== parent) fire(`parent ${parent} is gone`);
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
