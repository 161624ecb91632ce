#!/usr/bin/env node
// Time to detection, from stored soaks of the detection preset: for each run of
// an unsafe configuration, when its first anomaly of an expected type was
// complete (the last event of its witness), counted from the run's first
// operation; per configuration, how many runs had caught it by 5, 10, 15, 20
// and 30 s, the median, and the shortest of 10/15/20/25/30 s by which 95% had.
// A run's first seconds are the same whatever its --time-limit (its seed draws
// the same faults), so this says what shorter runs would catch without running
// them. Prints a Markdown table (docs/measurements.md#ten-second-runs).
//
//   node scripts/time-to-detection.mjs SOAK_DIR...
import { readFileSync, readdirSync, existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
const preset = JSON.parse(readFileSync(fileURLToPath(new URL("../soak/presets/detection.json", import.meta.url)), "utf8"));
if (process.argv.length < 3) {
  process.stderr.write("usage: node scripts/time-to-detection.mjs SOAK_DIR... (soak directories of the detection preset, with their runs/)\n");
  process.exit(254);
}
const want = new Map(preset.configurations.filter((c) => c.expect.find).map((c) => [c.name, Object.keys(c.expect.find)]));
const per = new Map();
for (const soak of process.argv.slice(2)) {
  const runs = join(soak, "runs");
  if (!existsSync(runs)) continue;
  for (const config of readdirSync(runs)) {
    if (!want.has(config)) continue;
    for (const test of readdirSync(join(runs, config))) for (const stamp of readdirSync(join(runs, config, test))) {
      const dir = join(runs, config, test, stamp);
      if (stamp === "latest" || !existsSync(join(dir, "results.json"))) continue;
      const r = JSON.parse(readFileSync(join(dir, "results.json"), "utf8"));
      const lines = readFileSync(join(dir, "history.ndjson"), "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
      const byIndex = new Map(lines.filter((e) => typeof e.index === "number").map((e) => [e.index, e.time]));
      const t0 = lines.find((e) => e.type === "invoke")?.time ?? 0;
      let first = Infinity;
      for (const t of want.get(config)) for (const a of r.anomalies?.[t] ?? []) {
        const ts = (a.events ?? []).map((i) => byIndex.get(i)).filter((x) => typeof x === "number");
        if (ts.length) first = Math.min(first, (Math.max(...ts) - t0) / 1e9);
      }
      (per.get(config) ?? per.set(config, []).get(config)).push(first);
    }
  }
}
for (const [c, xs] of [...per].sort()) {
  const s = [...xs].sort((a, b) => a - b);
  const under = (l) => s.filter((x) => x <= l).length;
  const limit = [10, 15, 20, 25, 30].find((l) => under(l) >= 0.95 * s.length) ?? ">30";
  console.log(`| ${c} | ${s.length} | ${under(5)} | ${under(10)} | ${under(15)} | ${under(20)} | ${under(30)} | ${s.filter((x) => x !== Infinity).length ? median(s).toFixed(1) : "-"} | ${limit} |`);
}

function median(s) { return s[Math.floor((s.length - 1) / 2)]; }
