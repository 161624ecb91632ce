// The last line of defence against leaked processes. Every process a run starts is
// told to a small shell process of its own process group. The reaper reads "add
// PID" / "del PID" lines on its stdin; when stdin closes (the runner exited, by any
// means, SIGKILL included) it resumes and kills whatever is still registered.
// SIGCONT comes first because a SIGSTOPped process would otherwise never act on
// anything but SIGKILL, and the reaper may be all that is left to send it.
import { spawn, type ChildProcess } from "node:child_process";

const SCRIPT = `
pids=" "
while read -r op pid; do
  case "$op" in
    add) pids="$pids$pid " ;;
    del) pids="\${pids/ $pid / }" ;;
  esac
done
for p in $pids; do kill -CONT "$p" 2>/dev/null; kill -KILL "$p" 2>/dev/null; done
exit 0
`;

export class Reaper {
  private readonly child: ChildProcess;

  constructor(label: string) {
    // Its own process group, so a Ctrl-C aimed at the runner cannot take it down
    // before it has done its work. The label ($0) names the run in `ps`.
    this.child = spawn("bash", ["-c", SCRIPT, `fencecheck-reaper ${label}`], { detached: true, stdio: ["pipe", "ignore", "ignore"] });
    this.child.unref();
    // The pipe must not keep the runner alive, and a reaper that died early must
    // not crash the runner with EPIPE.
    this.child.stdin?.on("error", () => {});
    (this.child.stdin as unknown as { unref?: () => void }).unref?.();
  }

  add(pid: number): void {
    this.child.stdin?.write(`add ${pid}\n`);
  }

  remove(pid: number): void {
    this.child.stdin?.write(`del ${pid}\n`);
  }

  /** Kill everything still registered now (the normal teardown path calls it last). */
  close(): Promise<void> {
    return new Promise((resolve) => {
      if (this.child.exitCode !== null || this.child.signalCode !== null) return resolve();
      // Referenced again while we wait, or an otherwise idle runner would exit
      // (with code 0) before the reaper has finished.
      this.child.ref();
      this.child.once("exit", () => resolve());
      this.child.stdin?.end();
    });
  }
}
