// MariaDB with --deploy docker on a real engine: mariadbd as the container's PID
// 1 (the image installs Debian's mariadb-server; the data directory is mounted at
// its own path), paused and killed under a fenced run of the named lock, and
// nothing left in the engine. Where no engine answers, the file says so and its
// test counts as skipped.
import { describe, it, expect } from "vitest";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { runCli, tempRunDir } from "../../../test/helpers.ts";
import { engineOrSkip, fencecheckObjects, loadRun, SHORT_RUN } from "../../../test/docker/engine.ts";

const engine = await engineOrSkip("backends/mariadb/test/docker.test.ts");

describe.skipIf(!engine)("--deploy docker: MariaDB", () => {
  it("mariadb-get-lock on a MariaDB container paused and killed: valid fenced, the faults in the history, the server restarted on its data, nothing left", async () => {
    const store = tempRunDir("fc-docker-mariadb-");
    const cli = runCli("test", ["--deploy", "docker", ...SHORT_RUN, "--backend", "mariadb", "--client", "mariadb-get-lock", "--nemesis", "pause-server,kill", "--nemesis-interval", "1.5", "--command-timeout", "1000", "--fence", "on", "--time-limit", "6", "--store", store]);
    expect(await cli.exit, cli.stdout() + cli.stderr()).toBe(0);
    const { dir, run, events, results } = loadRun(store);
    expect(Object.keys(run.deployment.containers)).toEqual(["mariadb-1"]);
    expect(results.valid).toBe(true);
    expect(events.some((e) => e.f === "start-pause" && (e.value as { targets: string[] }).targets[0] === "mariadb-1")).toBe(true);
    // A killed container's connections go silent (no reset comes back through the published port): the command timeout ends them.
    const restarted = events.find((e) => e.f === "restart");
    expect(restarted).toBeDefined();
    expect(events.some((e) => e.f === "acquire" && e.type === "ok" && (e.time as number) > (restarted!.time as number)), JSON.stringify(events)).toBe(true);
    // The first start made the data directory in the container (install-db), and each start ended ready.
    const log = readFileSync(join(dir, "logs", "mariadb-1.log"), "utf8");
    expect(log).toMatch(/Installing MariaDB\/MySQL system tables/);
    expect(log).toMatch(/mariadbd: ready for connections/);
    expect(await fencecheckObjects(engine!, dir)).toEqual({ containers: [], running: [], networks: [] });
  }, 600_000);
});
