// One real redis-server for a test file: started before its tests, and stopped
// after them once `closing` (its clients) is done, so no client sees it go first.
import { beforeAll, afterAll } from "vitest";
import { ProcessGroup } from "../../../cluster/processes.ts";
import { PortPlan } from "../../../cluster/ports.ts";
import { startRedisNodes } from "../server.ts";
import type { ServerNode } from "../../../cluster/cluster.ts";
import { tempRunDir } from "../../../test/helpers.ts";

export function useRedisServer(closing: () => Promise<unknown> = async () => {}): () => ServerNode {
  let group: ProcessGroup;
  let node: ServerNode;
  beforeAll(async () => {
    const dir = tempRunDir();
    group = new ProcessGroup(dir);
    [node] = await startRedisNodes(group, new PortPlan(0), 1, { runDir: dir });
  });
  afterAll(async () => {
    await closing();
    await group?.stopAll();
  });
  return () => node;
}
