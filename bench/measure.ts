// A command timed as a user sees it: the wall time of the whole process, from its
// start to its exit (node's start, module loading and npm's own start included),
// and its peak RSS. The peak comes from GNU time (/usr/bin/time, Debian's `time`
// package), whose figure is that of the process or of its largest descendant, so
// `npm run check` reports the node process npm starts, not npm; without it the
// peak is unknown (null) and only the wall time is measured.
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const GNU_TIME = "/usr/bin/time";

export interface Measure {
  wall_ms: number;
  /** null when /usr/bin/time is missing. */
  max_rss_mb: number | null;
  exit_code: number;
}

/** Whether peaks can be measured here. */
export const canMeasurePeak = (): boolean => existsSync(GNU_TIME);

/**
 * Runs `command args` in `cwd`, its output discarded but for the last of its
 * stderr, which a failure (an exit code not in `ok`) quotes.
 */
export async function measure(command: string, args: readonly string[], cwd: string, ok: readonly number[] = [0]): Promise<Measure> {
  const peak = canMeasurePeak();
  const scratch = peak ? mkdtempSync(join(tmpdir(), "bench-time-")) : null;
  const report = scratch ? join(scratch, "time") : "";
  const [file, argv] = peak ? [GNU_TIME, ["-o", report, "-f", "%M", command, ...args]] : [command, [...args]];
  try {
    const started = performance.now();
    const { code, stderr } = await new Promise<{ code: number; stderr: string }>((done, fail) => {
      const child = spawn(file, argv, { cwd, stdio: ["ignore", "ignore", "pipe"] });
      let stderr = "";
      child.stderr.on("data", (b: Buffer) => (stderr = (stderr + b.toString("utf8")).slice(-4000)));
      child.on("error", fail);
      child.on("close", (c) => done({ code: c ?? -1, stderr }));
    });
    const wall_ms = performance.now() - started;
    if (!ok.includes(code)) throw new Error(`${command} ${args.join(" ")} exited ${code}: ${stderr.trim().split("\n").slice(-3).join(" / ")}`);
    // GNU time writes "Command exited with non-zero status N" before the figure when the code is not 0.
    const kb = peak ? Number(readFileSync(report, "utf8").trim().split("\n").pop()) : NaN;
    return { wall_ms, max_rss_mb: Number.isFinite(kb) ? kb / 1024 : null, exit_code: code };
  } finally {
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  }
}
