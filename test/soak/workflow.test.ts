// The nightly workflow runs only at night on GitHub, so nothing else would notice
// it rot. This test reads it as Actions would: the triggers, shards that do not
// cancel each other, and every shard's command put through the soak command's own
// parser (the same function `npm run soak` calls), so a renamed configuration or
// option fails here, today. The shards are 1..N, each once, with one seed, and
// by the soak's own split (plannedPairs, which `--shard` runs by) they run every
// (configuration, run index) pair of the preset exactly once, within the job's
// time limit. The merge job's command parses too, runs after every shard whatever
// their verdicts, compares with the previous night through the cache and uploads
// the merged soak whatever its verdict.
import { describe, it, expect } from "vitest";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import { parseSoakArgs } from "../../cli/soak-options.ts";
import { loadPreset, plannedPairs } from "../../soak/index.ts";
import { REPO } from "../helpers.ts";
import type { Step } from "../github.ts";

const workflow = parse(readFileSync(join(REPO, ".github/workflows/nightly-soak.yml"), "utf8"));
const job = workflow.jobs.soak;
const merge = workflow.jobs.merge;
const shards: unknown[] = job.strategy.matrix.shard;
const steps: Step[] = job.steps;
const mergeSteps: Step[] = merge.steps;
/** What `${{ github.* }}` stands for in a sample night: a number, as run_number and run_id are. */
const GITHUB_SAMPLE = "4242";

/** A `${{ ... }}` expression as Actions would expand it for one shard: matrix values, github.* numbers, and inputs falling back to their `||` default on a schedule. */
function expand(text: string, matrix: Record<string, unknown>): string {
  return text.replace(/\$\{\{\s*(.+?)\s*\}\}/g, (_, expr: string) => {
    const m = /^matrix\.([\w-]+)$/.exec(expr);
    if (m) {
      expect(matrix, `matrix.${m[1]}`).toHaveProperty(m[1]);
      return String(matrix[m[1]]);
    }
    if (/^github\.(run_number|run_id|run_attempt)$/.test(expr)) return GITHUB_SAMPLE;
    const input = /^inputs\.([\w-]+)\s*\|\|\s*(\S+)$/.exec(expr);
    if (input) {
      expect(workflow.on.workflow_dispatch.inputs).toHaveProperty(input[1]);
      return input[2].startsWith("github.") ? expand(`\${{ ${input[2]} }}`, matrix) : input[2].replace(/^'(.*)'$/, "$1");
    }
    throw new Error(`an expression this test cannot expand: ${expr}`);
  });
}

function commandArgs(stepList: Step[], matrix: Record<string, unknown>): string[] {
  const run = stepList.find((s) => s.run?.includes("npm run soak"))!.run!;
  const line = expand(run, matrix).trim();
  expect(line).toMatch(/^npm run soak -- /);
  return line.replace(/^npm run soak -- /, "").split(/\s+/);
}

/** An artifact name pattern of download-artifact (`*` for anything) as a RegExp. */
const glob = (g: string): RegExp => new RegExp(`^${g.split("*").map((part) => part.replace(/[.$^{}()|[\]\\+?]/g, "\\$&")).join(".*")}$`);

const soakRequest = (shard: unknown) => {
  const { request, help } = parseSoakArgs(commandArgs(steps, { shard }));
  expect(help).toBe(false);
  if (request.kind !== "run") throw new Error(`shard ${String(shard)}: a ${request.kind} request, not a soak that runs`);
  return request;
};

describe("the nightly soak workflow", () => {
  it("runs on a schedule (cron, UTC) and by hand", () => {
    const cron: string = workflow.on.schedule[0].cron;
    expect(cron.trim().split(/\s+/)).toHaveLength(5);
    expect(workflow.on).toHaveProperty("workflow_dispatch");
  });

  it("every shard runs a soak the soak command accepts, of the shipped nightly preset: shards 1..N each once, all of N, with one seed", () => {
    expect(job.strategy["fail-fast"]).toBe(false);
    expect(shards.length).toBeGreaterThan(1);
    const requests = shards.map(soakRequest);
    for (const request of requests) {
      expect(request.matrix.source).toBe("preset nightly");
      expect(request.only).toBeNull();
      // The soak's budget ends it inside the job's limit, with room for set-up and upload.
      expect(request.timeBudgetS).not.toBeNull();
      expect(request.timeBudgetS! + 10 * 60).toBeLessThanOrEqual(job["timeout-minutes"] * 60);
      // Each configuration runs at its own limit (soak/presets/nightly.json): no --time-limit over them all.
      expect(request.timeLimitS).toBeNull();
    }
    for (const c of loadPreset("nightly").configurations) expect(c.options["time-limit"], c.name).toBeGreaterThanOrEqual(10);
    const n = shards.length;
    expect(requests.map((r) => r.shard!.index).sort((a, b) => a - b)).toEqual(Array.from({ length: n }, (_, i) => i + 1));
    expect(requests.every((r) => r.shard!.count === n)).toBe(true);
    // One expression for all: the seed may not depend on the shard, or the shards would not be one soak.
    const run = steps.find((s) => s.run?.includes("npm run soak"))!.run!;
    const seed = /--seed (\$\{\{.*?\}\}|\S+)/.exec(run)![1];
    expect(seed).not.toMatch(/matrix\./);
    expect(new Set(requests.map((r) => r.seed)).size).toBe(1);
  });

  it("the shards together run every (configuration, run index) pair of the preset exactly once", () => {
    const ran = shards.flatMap((shard) => {
      const r = soakRequest(shard);
      return plannedPairs(r.configurations, r.testCount, r.shard).map((p) => `${p.config.name}#${p.index}`);
    });
    const r = soakRequest(shards[0]);
    const whole = plannedPairs(loadPreset("nightly").configurations, r.testCount, null).map((p) => `${p.config.name}#${p.index}`);
    expect(ran).toHaveLength(whole.length);
    expect([...ran].sort()).toEqual([...whole].sort());
  });

  it("each shard's soak directory is uploaded whatever the verdict, once per shard (a re-run replaces it), for a limited time", () => {
    expect(steps.some((s) => s.run?.trim() === "npm ci")).toBe(true);
    const upload = steps.find((s) => s.uses?.startsWith("actions/upload-artifact@"))!;
    expect(upload.if).toMatch(/always\(\)/);
    const name = String(upload.with!.name);
    for (const part of ["${{ matrix.shard }}", "${{ github.run_id }}"]) expect(name).toContain(part);
    expect(new Set(shards.map((s) => expand(name, { shard: s }))).size).toBe(shards.length);
    expect(upload.with!.overwrite).toBe(true);
    expect(Number(upload.with!["retention-days"])).toBeGreaterThan(0);
    // The path it uploads is the soak directory found after the soak, also whatever the verdict.
    const find = steps.find((s) => s.id === "soak")!;
    expect(find.if).toMatch(/always\(\)/);
    expect(String(upload.with!.path)).toBe("${{ steps.soak.outputs.dir }}");
  });

  it("the merge job runs after every shard whatever they did, merges what they uploaded, compares with last night and keeps tonight's summary", () => {
    expect(merge.needs).toBe("soak");
    expect(merge.if).toMatch(/always\(\)/);
    expect(mergeSteps.some((s) => s.run?.trim() === "npm ci")).toBe(true);
    const { request, help } = parseSoakArgs(commandArgs(mergeSteps, {}));
    expect(help).toBe(false);
    expect(request.kind).toBe("merge");
    if (request.kind !== "merge") return;
    // The shards' artifacts, each downloaded into a directory of its own under the one the merge is given.
    const download = mergeSteps.find((s) => s.uses?.startsWith("actions/download-artifact@"))!;
    const shardUpload = steps.find((s) => s.uses?.startsWith("actions/upload-artifact@"))!;
    const shardArtifacts = glob(expand(String(download.with!.pattern), {}));
    for (const shard of shards) expect(expand(String(shardUpload.with!.name), { shard })).toMatch(shardArtifacts);
    expect(download.with!["merge-multiple"]).toBeUndefined();
    expect(request.dirs).toEqual([`${download.with!.path}/*`]);
    // Last night's summaries are in the store before the merge, which compares with the newest of them.
    const restore = mergeSteps.find((s) => s.uses?.startsWith("actions/cache/restore@"))!;
    expect(mergeSteps.indexOf(restore)).toBeLessThan(mergeSteps.findIndex((s) => s.run?.includes("npm run soak")));
    expect(String(restore.with!.path)).toBe(`${request.store}/soaks/*/summary.json`);
    const save = mergeSteps.find((s) => s.uses?.startsWith("actions/cache/save@"))!;
    expect(save.if).toMatch(/always\(\)/);
    expect(save.with!.path).toBe(restore.with!.path);
    expect(String(restore.with!["restore-keys"])).toMatch(/^nightly-soak-merged-/);
    // The merged soak is uploaded whatever its verdict, under a name no shard's artifact has.
    const upload = mergeSteps.find((s) => s.uses?.startsWith("actions/upload-artifact@"))!;
    expect(upload.if).toMatch(/always\(\)/);
    expect(String(upload.with!.path)).toBe("${{ steps.merged.outputs.dir }}");
    expect(expand(String(upload.with!.name), {})).not.toMatch(shardArtifacts);
    // The merge's exit code is the job's: a missed expectation fails the night.
    expect((mergeSteps.find((s) => s.run?.includes("npm run soak")) as Record<string, unknown>)["continue-on-error"]).toBeUndefined();
  });
});
