// `fencecheck reap` (in the checkout also `npm run reap`): kill the local
// processes (servers, proxies, workers) of runs whose runner is gone together
// with its reaper, and remove the containers and networks of docker-mode runs
// whose runner is gone (killed outright, or a machine that lost power mid-run).
// Every run does this itself when it starts; this is for the machine that runs
// no more of them. Runs still going keep theirs.
import { BadInput, EXIT } from "../lib/index.ts";
import { findEngine, NoEngine, reapedText, reapLeftovers } from "../docker/index.ts";
import { sweepLeftovers } from "../cluster/leftovers.ts";

const HELP = `Usage: fencecheck reap

Kills the local processes (servers, proxies, workers) of runs whose runner is
gone, each found by the owner its environment names (FENCECHECK_OWNER), and
removes the containers and networks left by docker-mode runs (--deploy docker)
whose runner is gone, with the port forwards (iptables) of their networks that
outlived their containers. Runs still going are left alone.
`;

export async function main(args: string[]): Promise<number> {
  if (args.includes("--help") || args.includes("-h")) {
    process.stdout.write(HELP);
    return EXIT.valid;
  }
  if (args.length) throw new BadInput(`fencecheck reap takes no arguments, got ${args.map((a) => JSON.stringify(a)).join(" ")}`);
  const swept = await sweepLeftovers();
  const local =
    `Killed ${swept.processes.length} process(es) of runs that are gone.\n` +
    [...swept.processes.map((p) => `  pid ${p.pid} ${p.command}\n`), ...swept.dirs.map((d) => `  directory ${d}\n`)].join("");
  let engine: Awaited<ReturnType<typeof findEngine>> | null | undefined;
  try {
    engine = await findEngine().catch((err: unknown) => {
      if (err instanceof NoEngine) return null;
      throw err;
    });
  } finally {
    // An engine that fails to answer must not hide what was killed.
    if (engine === undefined) process.stdout.write(local);
  }
  if (!engine) {
    process.stdout.write("No container engine answers, so no container can be left over.\n" + local);
    return EXIT.valid;
  }
  const reaped = await reapLeftovers(engine.docker);
  process.stdout.write(
    `Removed ${reapedText(reaped)} of runs that are gone (${engine.where}).\n` +
      [...reaped.containers.map((c) => `  container ${c}\n`), ...reaped.networks.map((n) => `  network ${n}\n`), ...reaped.forwards.map((n) => `  port forwards of network ${n}\n`)].join("") +
      local,
  );
  return EXIT.valid;
}
