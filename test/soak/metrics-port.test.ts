// npm run soak --metrics-port: a fixed port that every run serves its metrics on
// in turn. 0 (a port per run, which no Prometheus could follow), a port below
// 1024 and a taken port are refused before the soak starts.
import { describe, it, expect } from "vitest";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { parseSoakArgs } from "../../cli/soak-options.ts";
import { runCli, takenPort, tempRunDir } from "../helpers.ts";

describe("soak --metrics-port", () => {
  it("goes to every run of the soak", () => {
    const { request } = parseSoakArgs(["--preset", "smoke", "--metrics-port", "19464"]);
    expect(request.kind === "run" && request.metricsPort).toBe(19464);
    expect(parseSoakArgs(["--preset", "smoke"]).request).toMatchObject({ metricsPort: null });
  });

  for (const port of ["0", "80"])
    it(`refuses --metrics-port ${port}`, () => {
      expect(() => parseSoakArgs(["--preset", "smoke", "--metrics-port", port])).toThrow(`--metrics-port of a soak must be a fixed port of 1024 or more, got ${port}`);
    });

  it("refuses a taken port with 254 before any run", async () => {
    const store = tempRunDir("fc-soak-metrics-");
    const taken = await takenPort();
    try {
      const run = runCli("soak", ["--preset", "smoke", "--metrics-port", String(taken.port), "--store", store]);
      expect(await run.exit, run.stderr()).toBe(254);
      expect(run.stderr()).toContain(`fencecheck soak: --metrics-port ${taken.port}: 127.0.0.1:${taken.port} cannot be bound`);
      expect(existsSync(join(store, "soaks"))).toBe(false);
    } finally {
      taken.close();
    }
  });
});
