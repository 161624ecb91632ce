// The GitHub Action a team's repository uses (action.yml): its steps in the order
// that keeps a night's evidence whatever the verdict, and every command it runs
// run for real, as Actions runs them, in a team's project outside the checkout
// (fencecheck packed and installed there, test/package/team.ts): two nights, the
// second comparing with the first through the summaries a cache would carry, and
// failing on a missed expectation.
import { describe, it, expect, beforeAll } from "vitest";
import { cpSync, existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import type { Step } from "../github.ts";
import { REPO } from "../helpers.ts";
import { run, teamEnv, teamProject } from "./team.ts";

let dir: string;

beforeAll(async () => {
  ({ dir } = await teamProject());
}, 300_000);

describe("the GitHub Action (action.yml), its commands run in the team's project", () => {
  const action = parse(readFileSync(join(REPO, "action.yml"), "utf8")) as {
    inputs: Record<string, { default?: string }>;
    outputs: Record<string, { value: string }>;
    runs: { using: string; steps: Step[] };
  };
  const steps = action.runs.steps;
  const index = (pred: (s: Step) => boolean): number => steps.findIndex(pred);

  it("installs Node, brings back the last summary before the soak, uploads and keeps the summary whatever the verdict, then fails on it", () => {
    expect(action.runs.using).toBe("composite");
    const setupNode = index((s) => s.uses?.startsWith("actions/setup-node@") === true);
    const restore = index((s) => s.uses?.startsWith("actions/cache/restore@") === true);
    const soak = index((s) => s.id === "soak");
    const upload = index((s) => s.uses?.startsWith("actions/upload-artifact@") === true);
    const save = index((s) => s.uses?.startsWith("actions/cache/save@") === true);
    const verdict = steps.length - 1;
    expect([setupNode, restore, soak, upload, save].every((i) => i >= 0)).toBe(true);
    expect(setupNode).toBeLessThan(restore);
    expect(restore).toBeLessThan(soak);
    expect(soak).toBeLessThan(upload);
    expect(upload).toBeLessThan(save);
    expect(save).toBeLessThan(verdict);
    for (const i of [upload, save]) expect(steps[i].if).toMatch(/always\(\)/);
    // The cache holds summaries only, under the store the soak writes to, per name.
    expect(steps[restore].with!.path).toBe("${{ inputs.store }}/soaks/*/summary.json");
    expect(steps[save].with!.path).toBe(steps[restore].with!.path);
    expect(steps[restore].with!["restore-keys"]).toBe("${{ inputs.name }}-");
    expect(steps[upload].with!.path).toBe("${{ steps.soak.outputs.soak-dir }}");
    expect(Number(steps[upload].with!["retention-days"])).toBeGreaterThan(0);
    // Every step that runs a command runs it in bash, as the test below does.
    for (const s of steps.filter((s) => s.run)) expect(s.shell).toBe("bash");
  });

  /** Runs the action's `run:` steps in the project as Actions would (bash -eo pipefail), the `uses:` steps left to Actions. */
  async function runAction(inputs: Record<string, string>): Promise<{ outputs: Record<string, string>; summary: string; codes: Record<string, number>; log: string }> {
    // Each night starts from the repository as checked out: here one that keeps no
    // lock file, so the install step takes its `npm install` branch (quick where the
    // runner's node_modules is already there), and what npm writes goes with the night.
    rmSync(join(dir, "package-lock.json"), { force: true });
    const outputs: Record<string, string> = {};
    const codes: Record<string, number> = {};
    const summaryFile = join(dir, ".step-summary.md");
    writeFileSync(summaryFile, "");
    let log = "";
    const expand = (text: string): string =>
      text.replace(/\$\{\{\s*(.+?)\s*\}\}/g, (_, expr: string) => {
        const input = /^inputs\.([\w-]+)$/.exec(expr);
        if (input) {
          expect(action.inputs, `inputs.${input[1]}`).toHaveProperty(input[1]);
          return inputs[input[1]] ?? action.inputs[input[1]].default ?? "";
        }
        const output = /^steps\.soak\.outputs\.([\w-]+)$/.exec(expr);
        if (output) return outputs[output[1]] ?? "";
        throw new Error(`an expression this test cannot expand: ${expr}`);
      });
    for (const step of steps.filter((s) => s.run)) {
      const outputFile = join(dir, ".step-output");
      writeFileSync(outputFile, "");
      const env = Object.fromEntries(Object.entries(step.env ?? {}).map(([k, v]) => [k, expand(v)]));
      const r = await run("bash", ["--noprofile", "--norc", "-eo", "pipefail", "-c", expand(step.run!)], {
        cwd: dir,
        env: teamEnv({ ...env, GITHUB_OUTPUT: outputFile, GITHUB_STEP_SUMMARY: summaryFile, GITHUB_ACTION_PATH: REPO }),
      });
      codes[step.name ?? step.id ?? "?"] = r.code;
      log += `--- ${step.name}: exit ${r.code}\n${r.stdout}${r.stderr}`;
      if (step.id) for (const line of readFileSync(outputFile, "utf8").split("\n").filter(Boolean)) outputs[line.slice(0, line.indexOf("="))] = line.slice(line.indexOf("=") + 1);
    }
    return { outputs, summary: readFileSync(summaryFile, "utf8"), codes, log };
  }

  it("a night that meets every expectation passes; the next night, its summary brought back as the cache would, says what changed and fails on a missed expectation", async () => {
    // One configuration a night keeps the test short: K1 with fencing, valid.
    const locks = JSON.parse(readFileSync(join(dir, "locks.json"), "utf8"));
    writeFileSync(join(dir, "nightly.json"), JSON.stringify({ ...locks, configurations: [locks.configurations[0]] }));
    const inputs = { matrix: "nightly.json", store: "ci-histories", "test-count": "1", "time-budget": "600", name: "team-soak" };
    const night1 = await runAction(inputs);
    expect(night1.codes, night1.log).toEqual({ "Install fencecheck": 0, Soak: 0, Verdict: 0 });
    expect(night1.outputs["exit-code"]).toBe("0");
    expect(existsSync(join(dir, night1.outputs["soak-dir"], "summary.html"))).toBe(true);
    expect(night1.summary).toMatch(/PASSED: every configuration met its expectation/);

    // What actions/cache carries from one night to the next: the summaries, nothing else.
    const store = join(dir, "ci-histories");
    const kept = join(dir, ".cache");
    const summaries = readdirSync(join(store, "soaks")).filter((d) => d !== "latest" && existsSync(join(store, "soaks", d, "summary.json")));
    expect(summaries.length).toBe(1);
    for (const d of summaries) cpSync(join(store, "soaks", d, "summary.json"), join(kept, "soaks", d, "summary.json"));
    rmSync(store, { recursive: true });
    cpSync(kept, store, { recursive: true });

    // Night 2: the same configuration is now expected to show the stale write, which fencing refuses.
    const night2Locks = { ...locks, configurations: [{ ...locks.configurations[0], expect: { find: { "stale-write-accepted": 1 } } }] };
    writeFileSync(join(dir, "nightly.json"), JSON.stringify(night2Locks));
    const night2 = await runAction(inputs);
    expect(night2.codes, night2.log).toEqual({ "Install fencecheck": 0, Soak: 0, Verdict: 1 });
    expect(night2.outputs["exit-code"]).toBe("1");
    expect(night2.summary).toMatch(/MISSED k1-fenced/);
    expect(night2.summary).toMatch(/Changed since/);
    expect(night2.log).toMatch(/::error::a configuration missed its expectation/);
  }, 300_000);
});
