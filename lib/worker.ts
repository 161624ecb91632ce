// A worker thread on one of our entry points (scripts/build.mjs ENTRIES), so it
// runs the same code as the thread that starts it: the bundle in dist/ when that
// thread runs built code, the TypeScript source otherwise (tsx, vitest). A worker
// does not take `--import` in its execArgv, so for a source a one-line module
// registers tsx's loader inside the thread and then imports the source.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { Worker, type WorkerOptions } from "node:worker_threads";
import { entryFile } from "./paths.ts";

export function startWorker(entry: string, options: WorkerOptions = {}): Worker {
  const file = entryFile(entry);
  if (file.endsWith(".js")) return new Worker(file, options);
  const start = `import { register } from ${JSON.stringify(tsxApiUrl())}; register(); await import(${JSON.stringify(pathToFileURL(file).href)});`;
  return new Worker(new URL(`data:text/javascript,${encodeURIComponent(start)}`), options);
}

/** tsx's ESM API (`tsx/esm/api`, its import condition: the require one cannot load the ESM half of itself). */
function tsxApiUrl(): string {
  const manifest = createRequire(import.meta.url).resolve("tsx/package.json");
  const exports = (JSON.parse(readFileSync(manifest, "utf8")) as { exports: Record<string, { import: { default: string } }> }).exports;
  return pathToFileURL(join(dirname(manifest), exports["./esm/api"].import.default)).href;
}
