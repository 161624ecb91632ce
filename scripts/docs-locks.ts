// docs/locks.md and docs/locks.json from soaks of the libraries preset:
// `npm run docs:locks -- SOAK_DIR...` adds those soaks to docs/locks.json and
// makes the page from it; with no directory, the page is made again from the
// file (soak/locks-page.ts says how; a later soak's configuration replaces an
// earlier one's). test/docs/locks.test.ts makes the page again from
// docs/locks.json and fails while the two differ.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { BadInput } from "../lib/index.ts";
import { locksDataFrom, renderLocksPage, type LocksData } from "../soak/locks-page.ts";

const docs = (name: string): string => fileURLToPath(new URL(`../docs/${name}`, import.meta.url));

try {
  const previous = existsSync(docs("locks.json")) ? (JSON.parse(readFileSync(docs("locks.json"), "utf8")) as LocksData) : null;
  const { data, dropped } = locksDataFrom(process.argv.slice(2), previous);
  for (const name of dropped) console.log(`docs/locks.md: dropped ${name}: the preset's row changed since it was soaked`);
  const page = renderLocksPage(data);
  writeFileSync(docs("locks.json"), JSON.stringify(data, null, 1) + "\n");
  writeFileSync(docs("locks.md"), page);
  console.log(`docs/locks.md: ${Object.keys(data.clients).length} clients, ${data.configurations.length} configurations from ${data.soaks.length} soak(s)`);
} catch (err) {
  if (!(err instanceof BadInput)) throw err;
  console.error(`fencecheck ${err.message}`);
  process.exit(254);
}
