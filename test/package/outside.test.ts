// What a team does with fencecheck, outside this checkout: install the packed
// tarball into a project of its own next to its own lock library (ioredis 5,
// where fencecheck has 6), write an adapter that imports fencecheck/adapter,
// and then run `npx fencecheck test`, `check --out` and `soak --matrix`, and the
// API once, from a script and from the team's own vitest suite. Every path
// resolves in the team's project; the adapter's imports resolve from where the
// adapter lives. (action.test.ts runs the GitHub Action's commands in another.)
import { describe, it, expect, beforeAll } from "vitest";
import { cpSync, existsSync, readdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { readNdjson, REPO, snapshot } from "../helpers.ts";
import { ok, run, teamProject } from "./team.ts";

let dir: string;
let firstRun: string;

beforeAll(async () => {
  ({ dir } = await teamProject());
}, 300_000);

const npx = (args: string[]) => run("npx", ["--no-install", "fencecheck", ...args], { cwd: dir });

describe("fencecheck installed in a team's project", () => {
  it("is a command with the package's version, and its adapter's types check in the team's project", async () => {
    const version = await npx(["--version"]);
    expect(version.stdout.trim()).toBe(JSON.parse(readFileSync(join(REPO, "package.json"), "utf8")).version);
    // fencecheck keeps its own ioredis; the team's is another major version.
    expect(JSON.parse(readFileSync(join(dir, "node_modules/ioredis/package.json"), "utf8")).version).toMatch(/^5\./);
    expect(JSON.parse(readFileSync(join(dir, "node_modules/fencecheck/node_modules/ioredis/package.json"), "utf8")).version).toMatch(/^6\./);
    // The declarations in the tarball type the adapter: a wrong type there is an error. (The
    // project is CommonJS, as `npm init` makes one, and tsx runs its ES-module adapter as is;
    // "preserve" lets tsc read the adapter's import.meta as tsx does.)
    writeFileSync(join(dir, "tsconfig.json"), JSON.stringify({ compilerOptions: { module: "preserve", moduleResolution: "bundler", target: "ES2022", strict: true, noEmit: true, allowImportingTsExtensions: true, skipLibCheck: true, types: [] }, files: ["my-lock.ts"] }));
    const tsc = join(REPO, "node_modules/typescript/bin/tsc");
    const checked = await run(process.execPath, [tsc, "-p", "."], { cwd: dir });
    expect(checked.code, ok(checked)).toBe(0);
    writeFileSync(join(dir, "wrong.ts"), `import type { Hold } from "fencecheck/adapter";\nexport const h: Hold = { owner: "x", fence: "not a number", ttlMs: 1 };\n`);
    writeFileSync(join(dir, "tsconfig.wrong.json"), JSON.stringify({ extends: "./tsconfig.json", files: ["wrong.ts"] }));
    const wrong = await run(process.execPath, [tsc, "-p", "tsconfig.wrong.json"], { cwd: dir });
    expect(wrong.stdout).toMatch(/wrong\.ts.*Type 'string' is not assignable to type 'number'/);
  }, 120_000);

  it("`fencecheck test --client ./my-lock.ts --nemesis pause --fence off`: INVALID (exit 1), the history in the project's ./histories, the team's ioredis loaded", async () => {
    const r = await npx(["test", "--client", "./my-lock.ts", "--nemesis", "pause", "--fence", "off", "--time-limit", "10", "--nemesis-interval", "0.7", "--seed", "7"]);
    expect(r.code, ok(r)).toBe(1);
    expect(r.stdout).toMatch(/^INVALID /m);
    expect(r.stdout).toMatch(/stale-write-accepted ×\d+/);
    firstRun = realpathSync(join(dir, "histories", "latest"));
    expect(firstRun.startsWith(realpathSync(dir))).toBe(true);
    expect(r.stdout).toContain(`Run directory: ${firstRun}`);
    // run.json says which libraries the adapter used: the project's, not fencecheck's.
    const info = JSON.parse(readFileSync(join(firstRun, "run.json"), "utf8"));
    expect(info.adapter).toMatchObject({ module: join(realpathSync(dir), "my-lock.ts"), package: "team-locks@1.0.0", versions: { ioredis: expect.stringMatching(/^5\./) } });
    expect(r.stderr).toMatch(/^fencecheck: redis-fenced-write-pause-fence-off, client .*my-lock\.ts, seed 7, run directory /m);
    const grants = readNdjson(join(firstRun, "history.ndjson")).filter((e) => e.f === "acquire" && e.type === "ok");
    expect(grants.length).toBeGreaterThan(5);
    for (const g of grants) {
      const loaded = (g.value as { ioredis: { version: string; path: string; same: boolean } }).ioredis;
      expect(loaded.version).toMatch(/^5\./);
      expect(loaded.path.startsWith(join(realpathSync(dir), "node_modules", "ioredis"))).toBe(true);
      expect(loaded.same).toBe(true);
    }
  }, 120_000);

  it("`fencecheck check RUN --out DIR`: the same verdict, results and report in DIR, the run untouched", async () => {
    const before = snapshot(firstRun);
    const first = JSON.parse(readFileSync(join(firstRun, "results.json"), "utf8"));
    const r = await npx(["check", "histories/latest", "--out", "audit"]);
    expect(r.code, ok(r)).toBe(1);
    expect(r.stdout).toMatch(/^INVALID /m);
    expect(r.stdout).toContain("the run histories/latest is untouched");
    const audited = JSON.parse(readFileSync(join(dir, "audit", "results.json"), "utf8"));
    expect(audited.valid).toBe(false);
    expect(audited.anomaly_types).toEqual(first.anomaly_types);
    expect(audited.stats.anomaly_counts).toEqual(first.stats.anomaly_counts);
    expect(existsSync(join(dir, "audit", "report.html"))).toBe(true);
    expect(snapshot(firstRun)).toEqual(before);
  }, 60_000);

  it("the API: checkRun from `import { checkRun } from \"fencecheck\"` gives the command's verdict", async () => {
    writeFileSync(
      join(dir, "audit.mjs"),
      `import { checkRun } from "fencecheck";\nconst r = await checkRun(process.argv[2], { out: "api-audit" });\nconsole.log(JSON.stringify({ valid: r.valid, exitCode: r.exitCode, types: r.results.anomaly_types, outDir: r.outDir }));\n`,
    );
    const r = await run(process.execPath, ["audit.mjs", "histories/latest"], { cwd: dir });
    expect(r.code, ok(r)).toBe(0);
    const first = JSON.parse(readFileSync(join(firstRun, "results.json"), "utf8"));
    expect(JSON.parse(r.stdout)).toEqual({ valid: false, exitCode: 1, types: first.anomaly_types, outDir: "api-audit" });
    expect(existsSync(join(dir, "api-audit", "report.html"))).toBe(true);
  }, 60_000);

  it("the API from the team's own vitest suite: examples/vitest/my-lock.test.ts passes there", async () => {
    cpSync(join(REPO, "examples/vitest/my-lock.test.ts"), join(dir, "my-lock.test.ts"));
    const r = await run("npx", ["--no-install", "vitest", "run", "my-lock.test.ts"], { cwd: dir });
    expect(r.code, ok(r)).toBe(0);
    expect(r.stdout.replace(/\u001b\[[0-9;]*m/g, "")).toMatch(/Tests\s+2 passed/);
    expect(readdirSync(join(dir, "histories", "vitest")).length).toBeGreaterThan(0);
  }, 180_000);

  it("`fencecheck soak --matrix ./locks.json`: two configurations of the team's adapter, PASSED (exit 0), under the project's ./histories", async () => {
    const r = await npx(["soak", "--matrix", "./locks.json", "--seed", "3"]);
    expect(r.code, ok(r)).toBe(0);
    expect(r.stdout).toMatch(/^PASSED: every configuration met its expectation/m);
    const soakDir = realpathSync(join(dir, "histories", "soaks", "latest"));
    const summary = JSON.parse(readFileSync(join(soakDir, "summary.json"), "utf8"));
    expect(summary.configurations.map((c: { name: string }) => c.name)).toEqual(["k1-fenced", "k1-unfenced"]);
  }, 180_000);
});
