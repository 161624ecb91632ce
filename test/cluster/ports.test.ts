// PortPlan never hands one run the same port twice, even when two draws of a free
// port land on the same one (nothing has bound it yet: the servers start after all
// their ports are chosen). The draws are forced to repeat here.
import { describe, it, expect, vi, afterEach } from "vitest";
import { PortPlan, DEFAULT_PORTS } from "../../cluster/ports.ts";

afterEach(() => vi.restoreAllMocks());

describe("PortPlan", () => {
  it("draws again when a free port it already gave comes up a second time", async () => {
    // The same draw three times, then another: the second and third must be passed over.
    vi.spyOn(Math, "random").mockReturnValueOnce(0.5).mockReturnValueOnce(0.5).mockReturnValueOnce(0.5).mockReturnValue(0.25);
    const plan = new PortPlan(0);
    const a = await plan.take();
    const b = await plan.take();
    expect(b).not.toBe(a);
    expect(a).toBeGreaterThanOrEqual(20000);
    expect(b).toBeLessThanOrEqual(32767);
  });

  it("from --port-base: consecutive ports, skipping the well-known ones", async () => {
    const plan = new PortPlan(6378);
    expect([await plan.take(), await plan.take(), await plan.take()]).toEqual([6378, 6380, 6381]);
    expect(DEFAULT_PORTS.has(6379)).toBe(true);
  });
});
