// PortPlan never hands one run the same port twice, even when two draws of a free
// port land on the same one (nothing has bound it yet: the servers start after all
// their ports are chosen). The draws are forced to repeat here. Nor do two
// fencecheck processes drawing at once ever get the same one: their draws are
// reservations in a directory they share.
import { describe, it, expect, vi, afterEach } from "vitest";
import { spawn } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { PortPlan, TOXIPROXY_PORT } from "../../cluster/ports.ts";
import { WELL_KNOWN_PORTS } from "../../backends/index.ts";
import { REPO, tempDir } from "../helpers.ts";

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
    const plan = new PortPlan(6378, WELL_KNOWN_PORTS);
    expect([await plan.take(), await plan.take(), await plan.take()]).toEqual([6378, 6380, 6381]);
    expect(WELL_KNOWN_PORTS.has(6379)).toBe(true);
    // Toxiproxy's, whatever the backends say; and only what is declared beside it.
    const bare = new PortPlan(TOXIPROXY_PORT - 1);
    expect([await bare.take(), await bare.take()]).toEqual([TOXIPROXY_PORT - 1, TOXIPROXY_PORT + 1]);
    expect([await new PortPlan(6379).take()]).toEqual([6379]);
  });

  it("eight processes drawing at once from 24 ports: no port given twice; each given back when its process ends, a killed one's swept by the next", async () => {
    const reservations = tempDir("fc-ports-");
    // A range of its own, 24 ports for 16 draws: without reservations two of the
    // eight would all but surely draw one port (the chance they do not is under 1%).
    const lo = 20000 + 24 * Math.floor(Math.random() * 500);
    const env = { ...process.env, FENCECHECK_PORT_RANGE: `${lo}-${lo + 23}`, FENCECHECK_PORT_RESERVATIONS: reservations };
    // Each takes two ports as a run does, says which, and holds them until told to end.
    const code = `import { PortPlan } from "./cluster/ports.ts";
const plan = new PortPlan(0);
const ports = [await plan.take(), await plan.take()];
console.log(JSON.stringify(ports));
process.stdin.once("data", () => process.exit(0));`;
    const children = Array.from({ length: 8 }, () => spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", code], { cwd: REPO, env, stdio: ["pipe", "pipe", "inherit"] }));
    const drawn = await Promise.all(
      children.map(
        (c) =>
          new Promise<number[]>((resolve, reject) => {
            let out = "";
            c.stdout!.on("data", (d) => {
              out += d;
              if (out.includes("\n")) resolve(JSON.parse(out));
            });
            c.once("exit", (code) => reject(new Error(`a drawing process ended (${code}) before it drew: ${out}`)));
          }),
      ),
    );
    const all = drawn.flat();
    expect(all).toHaveLength(16);
    expect(new Set(all).size, `drawn: ${JSON.stringify(drawn)}`).toBe(16);
    expect(readdirSync(reservations).filter((f) => /^\d+$/.test(f)).sort()).toEqual(all.map(String).sort());
    // Seven end as a run does; one is killed outright.
    const ended = children.slice(1).map((c) => new Promise((r) => c.once("exit", r)));
    for (const c of children.slice(1)) c.stdin!.write("end\n");
    await Promise.all(ended);
    children[0].kill("SIGKILL");
    await new Promise((r) => children[0].once("exit", r));
    expect(readdirSync(reservations).filter((f) => /^\d+$/.test(f)).sort()).toEqual(drawn[0].map(String).sort());
    // The next process to draw sweeps the killed one's reservations.
    const next = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", `import { freePort } from "./cluster/ports.ts"; await freePort();`], { cwd: REPO, env, stdio: "inherit" });
    await new Promise((r) => next.once("exit", r));
    for (const p of drawn[0]) expect(existsSync(join(reservations, String(p)))).toBe(false);
  });
});
