// The nightly workflow runs only at night on GitHub, so nothing else would notice
// it rot. This test reads it as Actions would: the triggers, shards that do not
// cancel each other, and every shard's command put through the soak command's own
// parser (the same function `npm run soak` calls), so a renamed configuration or
// option fails here, today. Together the shards must run the whole preset, each
// configuration once, within the job's time limit; the soak directory is uploaded
// whatever the verdict, under a name unique to the shard and the attempt.
import { describe, it, expect } from "vitest";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import { parseSoakArgs } from "../../cli/soak-options.ts";
import { loadPreset } from "../../soak/index.ts";
import { REPO } from "../helpers.ts";
import type { Step } from "../github.ts";

const workflow = parse(readFileSync(join(REPO, ".github/workflows/nightly-soak.yml"), "utf8"));
const job = workflow.jobs.soak;
const shards: Array<Record<string, string>> = job.strategy.matrix.include;
const steps: Step[] = job.steps;

/** A `${{ ... }}` expression as Actions would expand it for one shard: matrix values, and inputs falling back to their `||` default on a schedule. */
function expand(text: string, shard: Record<string, string>): string {
  return text.replace(/\$\{\{\s*(.+?)\s*\}\}/g, (_, expr: string) => {
    const m = /^matrix\.([\w-]+)$/.exec(expr);
    if (m) {
      expect(shard, `matrix.${m[1]}`).toHaveProperty(m[1]);
      return shard[m[1]];
    }
    const input = /^inputs\.([\w-]+)\s*\|\|\s*(\S+)$/.exec(expr);
    if (input) {
      expect(workflow.on.workflow_dispatch.inputs).toHaveProperty(input[1]);
      return input[2].replace(/^'(.*)'$/, "$1");
    }
    throw new Error(`an expression this test cannot expand: ${expr}`);
  });
}

function soakArgs(shard: Record<string, string>): string[] {
  const run = steps.find((s) => s.run?.includes("npm run soak"))!.run!;
  const line = expand(run, shard).trim();
  expect(line).toMatch(/^npm run soak -- /);
  return line.replace(/^npm run soak -- /, "").split(/\s+/);
}

describe("the nightly soak workflow", () => {
  it("runs on a schedule (cron, UTC) and by hand", () => {
    const cron: string = workflow.on.schedule[0].cron;
    expect(cron.trim().split(/\s+/)).toHaveLength(5);
    expect(workflow.on).toHaveProperty("workflow_dispatch");
  });

  it("every shard runs a soak the soak command accepts, of the shipped nightly preset", () => {
    expect(job.strategy["fail-fast"]).toBe(false);
    expect(shards.length).toBeGreaterThan(1);
    for (const shard of shards) {
      const { request, help } = parseSoakArgs(soakArgs(shard));
      expect(help).toBe(false);
      expect(request.kind).toBe("run");
      if (request.kind !== "run") continue;
      expect(request.matrix.source).toBe("preset nightly");
      expect(request.only, shard.shard).not.toBeNull();
      // The soak's budget ends it inside the job's limit, with room for set-up and upload.
      expect(request.timeBudgetS).not.toBeNull();
      expect(request.timeBudgetS! + 10 * 60).toBeLessThanOrEqual(job["timeout-minutes"] * 60);
    }
  });

  it("the shards together run every configuration of the preset, each once", () => {
    const ran = shards.flatMap((shard) => {
      const { request } = parseSoakArgs(soakArgs(shard));
      return request.kind === "run" ? request.configurations.map((c) => c.name) : [];
    });
    expect([...ran].sort()).toEqual(loadPreset("nightly").configurations.map((c) => c.name).sort());
  });

  it("the set-up is the README's, and the soak directory is uploaded whatever the verdict, under a unique name, for a limited time", () => {
    expect(steps.some((s) => s.run?.trim() === "npm ci")).toBe(true);
    const upload = steps.find((s) => s.uses?.startsWith("actions/upload-artifact@"))!;
    expect(upload.if).toMatch(/always\(\)/);
    const name = String(upload.with!.name);
    for (const part of ["${{ matrix.shard }}", "${{ github.run_id }}", "${{ github.run_attempt }}"]) expect(name).toContain(part);
    expect(new Set(shards.map((s) => expand(name.replace(/\$\{\{ github\.[\w_]+ \}\}/g, "x"), s))).size).toBe(shards.length);
    expect(Number(upload.with!["retention-days"])).toBeGreaterThan(0);
    // The path it uploads is the soak directory found after the soak, also whatever the verdict.
    const find = steps.find((s) => s.id === "soak")!;
    expect(find.if).toMatch(/always\(\)/);
    expect(String(upload.with!.path)).toBe("${{ steps.soak.outputs.dir }}");
    // Tonight's summary is kept for tomorrow's comparison even when tonight failed.
    const save = steps.find((s) => s.uses?.startsWith("actions/cache/save@"))!;
    expect(save.if).toMatch(/always\(\)/);
    const restore = steps.find((s) => s.uses?.startsWith("actions/cache/restore@"))!;
    expect(steps.indexOf(restore)).toBeLessThan(steps.findIndex((s) => s.run?.includes("npm run soak")));
    expect(String(restore.with!["restore-keys"])).toMatch(/\$\{\{ matrix\.shard \}\}/);
  });
});
