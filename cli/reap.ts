// `fencecheck reap` (in the checkout also `npm run reap`): remove the containers and
// networks of docker-mode runs whose runner is gone (killed outright, or a machine
// that lost power mid-run). Every docker-mode run does this itself when it starts;
// this is for the machine that runs no more of them. Runs still going keep theirs.
import { BadInput, EXIT } from "../lib/index.ts";
import { findEngine, NoEngine, reapedText, reapLeftovers } from "../docker/index.ts";

export async function main(args: string[]): Promise<number> {
  if (args.includes("--help") || args.includes("-h")) {
    process.stdout.write("Usage: fencecheck reap\n\nRemoves the containers and networks left by docker-mode runs (--deploy docker) whose runner is gone.\n");
    return EXIT.valid;
  }
  if (args.length) throw new BadInput(`fencecheck reap takes no arguments, got ${args.map((a) => JSON.stringify(a)).join(" ")}`);
  const engine = await findEngine().catch((err: unknown) => {
    if (err instanceof NoEngine) return null;
    throw err;
  });
  if (!engine) {
    process.stdout.write("No container engine answers, so no container can be left over.\n");
    return EXIT.valid;
  }
  const reaped = await reapLeftovers(engine.docker);
  process.stdout.write(
    `Removed ${reapedText(reaped)} of runs that are gone (${engine.where}).\n` +
      [...reaped.containers.map((c) => `  container ${c}\n`), ...reaped.networks.map((n) => `  network ${n}\n`), ...reaped.forwards.map((n) => `  port forwards of network ${n}\n`)].join(""),
  );
  return EXIT.valid;
}
