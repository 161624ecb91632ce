// vitest's global set-up: the suite's commands run as users run them, from the
// JavaScript in dist/ (test/helpers.ts runCli), so dist/ is brought up to date
// with the sources once before any test file starts. A few milliseconds when
// nothing changed.
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";

export default function setup(): void {
  const root = fileURLToPath(new URL("..", import.meta.url));
  execFileSync(process.execPath, ["scripts/build.mjs", "--if-stale", "--quiet"], { cwd: root, stdio: "inherit" });
}
