// Writes test/durations.json, each test file's duration in the last full run,
// which test/sequencer.ts starts longest first. Run it after `npm test` on an
// otherwise idle machine: `node scripts/test-durations.mjs`. It reads vitest's
// own record of that run (node_modules/.vite/vitest/*/results.json), or, with
// --log FILE, the per-file lines ("✓ test/x.test.ts (3 tests) 5123ms") of a
// saved `npm test` output.
import { readFileSync, readdirSync, writeFileSync, existsSync } from "node:fs";
import { join } from "node:path";

const out = join(import.meta.dirname, "..", "test", "durations.json");
const durations = {};
const log = process.argv.indexOf("--log");
if (log > 0) {
  for (const m of readFileSync(process.argv[log + 1], "utf8").matchAll(/^ [✓❯×] ((?:test|backends\/[a-z0-9-]+\/test)\/\S+\.test\.ts) \(\d+ tests?(?:[^)]*)\) (\d+)ms$/gm)) durations[m[1]] = Number(m[2]);
} else {
  const base = join(import.meta.dirname, "..", "node_modules", ".vite", "vitest");
  if (!existsSync(base)) throw new Error(`no vitest results under ${base}: run npm test first`);
  for (const d of readdirSync(base)) {
    const f = join(base, d, "results.json");
    if (!existsSync(f)) continue;
    for (const [key, r] of Object.values(JSON.parse(readFileSync(f, "utf8")).results)) durations[key.replace(/^[^:]*:/, "")] = Math.round(r.duration);
  }
}
const sorted = Object.fromEntries(Object.entries(durations).sort(([a], [b]) => (a < b ? -1 : 1)));
writeFileSync(out, JSON.stringify(sorted, null, 1) + "\n");
console.log(`wrote ${Object.keys(sorted).length} durations to ${out}`);
