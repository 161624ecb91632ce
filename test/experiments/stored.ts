// What every experiment test reads back: its latest stored run under a store of its own.
import { chmodSync, readFileSync, realpathSync } from "node:fs";
import { join } from "node:path";
import { expect } from "vitest";
import { tempRunDir, runCli } from "../helpers.ts";

export function stored(store: string, name: string) {
  const dir = realpathSync(join(store, "experiments", name, "latest"));
  const results = JSON.parse(readFileSync(join(dir, "results.json"), "utf8"));
  const page = readFileSync(join(dir, "report.html"), "utf8");
  return { dir, results, page };
}

/** `npm run experiment -- <name> --quick` in a store of its own; it must exit 0. */
export async function quick(name: string) {
  const store = tempRunDir("fc-exp-");
  // mkdtemp makes it 0700: a Postgres the experiment starts runs as the postgres user.
  chmodSync(store, 0o755);
  const cli = runCli("experiment", [name, "--quick", "--store", store]);
  expect(await cli.exit, cli.stdout() + cli.stderr()).toBe(0);
  return { store, cli, ...stored(store, name) };
}
