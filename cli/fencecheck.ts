#!/usr/bin/env node
// `fencecheck <command> [options]`: the one command a team installs (package.json
// "bin"). It only picks the subcommand and loads its module (cli/commands.ts), so
// that `fencecheck check` pays for the checker and nothing of the runner: each
// subcommand is a bundle of its own in dist/cli/ (scripts/entries.mjs).
//
// Every path a user gives resolves against the directory the command runs in, as
// with any CLI. The one exception is fencecheck's own `npm run` scripts in its
// checkout: npm starts those in the package's root while the user typed the
// command in INIT_CWD, so that is where we go first (lib/user-dir.ts).
import { EXIT } from "../lib/exit.ts";
import { userDirectory } from "../lib/user-dir.ts";
import { dispatch } from "./commands.ts";

// An error no code path caught (a container engine's stream failing mid-run) is
// the tool failing: 255, never Node's own exit code 1, which would read as
// INVALID. The history is written synchronously, line by line, so nothing
// recorded is lost; the reaper kills the run's processes once we are gone.
for (const event of ["uncaughtException", "unhandledRejection"] as const)
  process.on(event, (err: unknown) => {
    process.stderr.write(`fencecheck failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(EXIT.crash);
  });
process.chdir(userDirectory());
dispatch(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`fencecheck failed: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(EXIT.crash);
  },
);
