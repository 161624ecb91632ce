// Every test file's temporary run directories (test/helpers.ts tempRunDir)
// removed when the file is done: a run keeps servers' data, logs and histories,
// hundreds of megabytes for a file of external runs, and a suite run after
// suite run filled this machine's disk. A file with a failed test keeps them,
// for its runs to be looked at (their paths are in its output), and so does
// FENCECHECK_KEEP_TEST_DIRS=1.
import { afterAll, afterEach } from "vitest";
import { rmSync } from "node:fs";
import { TEMP_DIRS } from "./helpers.ts";

let failed = false;

afterEach((ctx) => {
  if (ctx.task.result?.state === "fail") failed = true;
});

afterAll(() => {
  if (failed || process.env.FENCECHECK_KEEP_TEST_DIRS === "1") return;
  for (const dir of TEMP_DIRS.splice(0)) rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
});
