// A trial's containers and networks: whatever carries the owner label
// (docker/leftovers.ts) of one of the trial's processes. Found by the label
// alone, so a container made a moment before its runner died is found too.
import type Docker from "dockerode";
import { findEngine, labelledBy, removeLabelled, type Labelled } from "../docker/index.ts";

export const NOTHING: Labelled = { containers: [], networks: [] };

let engine: Promise<Docker | null> | null = null;

/** The engine docker-mode runs use, asked once; null when none answers (then no run made a container). */
function engineOrNull(): Promise<Docker | null> {
  return (engine ??= findEngine().then(
    (e) => e.docker,
    () => null,
  ));
}

/** The containers and networks whose owner is one of `owners` (owner labels). */
export async function ownedBy(owners: Set<string>): Promise<Labelled> {
  const docker = await engineOrNull();
  return docker ? labelledBy(docker, (owner) => owners.has(owner)) : NOTHING;
}

export async function remove(found: Labelled): Promise<void> {
  const docker = await engineOrNull();
  if (docker) await removeLabelled(docker, found);
}
