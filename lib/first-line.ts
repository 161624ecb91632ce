// What a program says of itself (redis-server --version): the first line of its
// output, or null when it failed or said nothing within 5 s.
import { execFile } from "node:child_process";

export const firstLine = (cmd: string, args: string[]): Promise<string | null> =>
  new Promise((resolve) => {
    execFile(cmd, args, { encoding: "utf8", timeout: 5000 }, (err, stdout) => resolve(err ? null : stdout.split("\n")[0].trim() || null));
  });
