// vitest's global set-up: the suite's commands run as users run them, from the
// JavaScript in dist/ (test/helpers.ts runCli), so dist/ is brought up to date
// with the sources once before any test file starts. A few milliseconds when
// nothing changed.
//
// It also makes the suite's own temporary directory, for what several test files
// need made once per suite run (test/package/team.ts: the packed tarball and a
// team's project with it installed), and removes it when the suite is done
// (unless FENCECHECK_KEEP_TEST_DIRS=1, as test/cleanup.ts).
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { TestProject } from "vitest/node";

declare module "vitest" {
  export interface ProvidedContext {
    /** A directory of this suite run's own (test/package/team.ts madeOnce). */
    suiteDir: string;
  }
}

export default function setup(project: TestProject): () => void {
  const root = fileURLToPath(new URL("..", import.meta.url));
  execFileSync(process.execPath, ["scripts/build.mjs", "--if-stale", "--quiet"], { cwd: root, stdio: "inherit" });
  const suiteDir = mkdtempSync(join(tmpdir(), "fc-suite-"));
  project.provide("suiteDir", suiteDir);
  return () => {
    if (process.env.FENCECHECK_KEEP_TEST_DIRS !== "1") rmSync(suiteDir, { recursive: true, force: true, maxRetries: 3 });
  };
}
