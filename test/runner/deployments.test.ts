// One rule for every backend: in each deployment (--deploy local, docker,
// external) its servers either run, and a named test file runs them there, or
// its registry entry says why not (`cannot`), and the refusal prints that
// reason. A backend refused somewhere without a reason, or said to run somewhere
// no test runs it, fails here.
import { describe, it, expect } from "vitest";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { BACKENDS, backendNamed } from "../../backends/index.ts";
import { TEST_OPTIONS, buildTest } from "../../runner/options.ts";
import { BadInput, parseArgs } from "../../lib/index.ts";
import { REPO, runCli, tempRunDir } from "../helpers.ts";

type Deploy = "local" | "docker" | "external";
const DEPLOYS: readonly Deploy[] = ["local", "docker", "external"];

/**
 * The test file that runs each backend in each deployment it runs in: a whole
 * run, named by its --backend (Redis, the default, by a run without one). Those
 * that run in the suite's shared files are named here; any other is found in the
 * backend's own test folder (backends/NAME/test/), so a new backend names its
 * own and touches nothing here.
 */
const RUN_IN: Record<string, Partial<Record<Deploy, string>>> = {
  redis: { local: "test/runner/two-client-pause.test.ts", docker: "test/docker/runs.test.ts", external: "test/cluster/external.test.ts" },
  redlock: { local: "backends/redlock/test/run.test.ts", docker: "test/docker/runs.test.ts", external: "test/cluster/external.test.ts" },
  etcd: { local: "test/nemesis/network.test.ts", docker: "test/docker/runs.test.ts", external: "test/cluster/external.test.ts" },
  zookeeper: { local: "backends/zookeeper/test/teardown.test.ts", docker: "test/docker/zookeeper-postgres.test.ts", external: "backends/zookeeper/test/external.test.ts" },
  postgres: { local: "backends/postgres/test/run.test.ts", docker: "test/docker/zookeeper-postgres.test.ts", external: "backends/postgres/test/external.test.ts" },
  dynamodb: { local: "backends/dynamodb/test/run.test.ts", external: "backends/dynamodb/test/external-service.test.ts" },
  lockserver: { local: "backends/lockserver/test/run.test.ts" },
};

/** A test file of the backend's own that starts a run of it in deployment d. */
function ownRunIn(name: string, d: Deploy): string | undefined {
  const dir = join("backends", name, "test");
  if (!existsSync(join(REPO, dir))) return undefined;
  return readdirSync(join(REPO, dir))
    // A library test (*.library.test.ts) is not in `npm test`: a backend's runs must be.
    .filter((f) => f.endsWith(".test.ts") && !f.endsWith(".library.test.ts"))
    .map((f) => join(dir, f))
    .find((file) => {
      const text = readFileSync(join(REPO, file), "utf8");
      return /runCli\("test"|jepsenRun\(/.test(text) && text.includes(`"--backend", "${name}"`) && (d === "local" || text.includes(`"--deploy", "${d}"`));
    });
}

/** What --deploy d needs besides itself to be accepted: the servers of an external cluster. */
const deployArgs = (name: string, d: Deploy): string[] =>
  d === "external" ? ["--endpoints", backendNamed(name)!.serverNames.map((s, i) => `${s}=127.0.0.1:${20001 + i}`).join(",")] : [];

/** The refusal of --backend name --deploy d, or null when it is accepted. */
function refusal(name: string, d: Deploy): string | null {
  try {
    buildTest(parseArgs(["--backend", name, "--deploy", d, ...deployArgs(name, d)], TEST_OPTIONS).options);
    return null;
  } catch (e) {
    if (e instanceof BadInput) return e.message;
    throw e;
  }
}

describe("every backend in every deployment", () => {
  for (const name of Object.keys(BACKENDS))
    for (const d of DEPLOYS)
      it(`--backend ${name} --deploy ${d}: runs, with a test that runs it, or is refused with its registry's reason`, () => {
        const why = d === "local" ? undefined : backendNamed(name)!.cannot?.[d];
        const refused = refusal(name, d);
        if (why !== undefined) {
          expect(why.length, `${name}'s reason for ${d} is empty`).toBeGreaterThan(20);
          expect(refused, `--backend ${name} --deploy ${d}: its registry says it cannot run there, but the options accept it`).not.toBeNull();
          expect(refused).toBe(`--deploy ${d} does not work with --backend ${name}: ${why}`);
          return;
        }
        expect(refused, `--backend ${name} --deploy ${d} is refused, but its registry entry (cannot.${d}) gives no reason: ${refused}`).toBeNull();
        const file = RUN_IN[name]?.[d] ?? ownRunIn(name, d);
        expect(file, `--backend ${name} runs in --deploy ${d} by its registry entry, but no test runs it there (RUN_IN here, or a file of backends/${name}/test/), nor is a reason given why it cannot (cannot.${d})`).toBeDefined();
        const text = readFileSync(join(REPO, file!), "utf8");
        expect(text, `${file} starts no run`).toMatch(/runCli\("test"|jepsenRun\(/);
        if (name !== "redis") expect(text, `${file} does not run --backend ${name}`).toContain(`"--backend", "${name}"`);
        if (d !== "local") expect(text, `${file} does not run --deploy ${d}`).toContain(`"--deploy", "${d}"`);
      });

  it("the refusal is bad input, exit 254, printing the reason, and the run makes nothing", async () => {
    const store = tempRunDir("fc-deploys-");
    const cli = runCli("test", ["--backend", "lockserver", "--deploy", "docker", "--store", join(store, "s")]);
    expect(await cli.exit).toBe(254);
    expect(cli.stderr()).toContain(BACKENDS.lockserver.cannot!.docker!);
    expect(existsSync(join(store, "s"))).toBe(false);
  });
});
