// The last line of defence against leaked processes. Every process a run starts is
// told to a small shell process of its own process group. The reaper reads "add
// PID" / "del PID" lines on its stdin; when stdin closes (the runner exited, by any
// means, SIGKILL included) it resumes and kills whatever is still registered.
// SIGCONT comes first because a SIGSTOPped process would otherwise never act on
// anything but SIGKILL, and the reaper may be all that is left to send it.
// A negative PID names a whole process group (a worker and the adapter programs it
// started). "dir PATH" lines name directories the run made outside its run directory (a
// Postgres data directory its server's user can reach), removed once the
// processes are gone; "keep" forgets them (--keep-data).
import { spawn, type ChildProcess } from "node:child_process";

const SCRIPT = `
pids=" "
dirs=()
while read -r op arg; do
  case "$op" in
    add) pids="$pids$arg " ;;
    del) pids="\${pids/ $arg / }" ;;
    dir) dirs+=("$arg") ;;
    keep) dirs=() ;;
  esac
done
for p in $pids; do kill -CONT -- "$p" 2>/dev/null; kill -KILL -- "$p" 2>/dev/null; done
for d in "\${dirs[@]}"; do rm -rf -- "$d"; done
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

  /** `group`: kill the process group `pid` leads, not the process alone. */
  add(pid: number, group = false): void {
    this.child.stdin?.write(`add ${group ? -pid : pid}\n`);
  }

  remove(pid: number, group = false): void {
    this.child.stdin?.write(`del ${group ? -pid : pid}\n`);
  }

  /** Remove `dir` once the processes are killed (at teardown, or when the runner dies). */
  removeDir(dir: string): void {
    if (/[\n\r]/.test(dir)) throw new Error(`a directory name with a line break cannot be handed to the reaper: ${JSON.stringify(dir)}`);
    this.child.stdin?.write(`dir ${dir}\n`);
  }

  /** Forget the directories removeDir named: they are kept. */
  keepDirs(): void {
    this.child.stdin?.write("keep\n");
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
