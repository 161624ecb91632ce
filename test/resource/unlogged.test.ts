// A decision that cannot be written to resource.ndjson must not take effect: the
// log is the record the checker trusts. /dev/full is a real file whose every
// write fails with ENOSPC.
import { existsSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { ResourceClient } from "../../clients/resource.ts";
import { startResource } from "../../resource/index.ts";
import { newRunStart } from "../../store/clock.ts";
import { metricValue } from "./helpers.ts";

describe.runIf(existsSync("/dev/full"))("a resource that cannot log", () => {
  it("answers 500, which the client reports as unknown, and applies nothing", async () => {
    const handle = await startResource({ logPath: "/dev/full", fencing: true, t0: newRunStart() });
    const client = new ResourceClient(handle.url);
    try {
      await expect(client.write("k", { owner: "a", fence: 1, process: 0, data: 1 })).rejects.toMatchObject({
        name: "ResourceUnavailable",
        code: "server-error",
        message: expect.stringMatching(/could not log the decision: ENOSPC/),
      });
      await expect(client.read("k", { process: 0 })).rejects.toMatchObject({ code: "server-error" });
      const metrics = await (await fetch(`${handle.url}/metrics`)).text();
      expect(metricValue(metrics, "resource_writes_applied_total")).toBe(0);
      expect(metricValue(metrics, "resource_reads_total")).toBe(0);
    } finally {
      client.close();
      await handle.stop();
    }
  });
});
