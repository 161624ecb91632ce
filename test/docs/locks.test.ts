// docs/locks.md, the safety table, is generated from soaks (`npm run docs:locks
// -- SOAK_DIR...`, soak/locks-page.ts) through docs/locks.json, the soaks' data it
// keeps. This makes the page again from that file and fails while the two
// differ, and while a row the page reports is no longer the preset's row (its
// options changed since the soak): the page then says what no run measured.
import { describe, it, expect } from "vitest";
import { execFile } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { REPO, tempRunDir } from "../helpers.ts";
import { LOCKS_PRESET, locksDataFrom, renderLocksPage, type LocksData } from "../../soak/locks-page.ts";
import { loadPreset } from "../../soak/matrix.ts";
import { CLIENTS, backendOfClient } from "../../backends/index.ts";

const PAGE = join(REPO, "docs", "locks.md");
const DATA = join(REPO, "docs", "locks.json");
const data = (): LocksData => JSON.parse(readFileSync(DATA, "utf8")) as LocksData;

describe("docs/locks.md", () => {
  it("is what `npm run docs:locks` makes of docs/locks.json", () => {
    const onDisk = readFileSync(PAGE, "utf8").split("\n");
    const made = renderLocksPage(data()).split("\n");
    const i = made.findIndex((line, j) => line !== onDisk[j]);
    expect(i < 0 && made.length === onDisk.length, i < 0 ? "lengths differ" : `line ${i + 1}: page has ${JSON.stringify(onDisk[i])}, data makes ${JSON.stringify(made[i])}; run npm run docs:locks`).toBe(true);
  });

  it("reports each row as the preset runs it now, every client with the library that ran and a command for each unsafe cell", () => {
    const rows = new Map(loadPreset(LOCKS_PRESET).configurations.map((c) => [c.name, c.options]));
    const d = data();
    for (const c of d.configurations) expect(c.options, `${c.name}: soak it again (npm run docs:locks)`).toEqual(rows.get(c.name));
    const page = readFileSync(PAGE, "utf8");
    for (const [client, facts] of Object.entries(d.clients)) {
      expect(facts.library, client).not.toBe("?");
      expect(page).toContain(`### ${client}`);
    }
    for (const c of d.configurations)
      for (const r of c.runs.filter((x) => x.status === "invalid").slice(0, 1))
        expect(page).toContain(`\`npx fencecheck test ${r.argv.join(" ")}\``);
    // Every preset client is in the table or named as not yet measured.
    for (const client of new Set([...rows.values()].map((o) => String(o.client)))) expect(page).toMatch(new RegExp(`### ${client}$|\`${client}\``, "m"));
  });

  it("finds each npm library's version where run.json records it: a client's package is one of its backend's", () => {
    const named = Object.entries(CLIENTS).filter(([, k]) => k.package);
    expect(named.length).toBeGreaterThan(5);
    for (const [client, k] of named) expect(backendOfClient(client)?.packages, client).toContain(k.package);
  });

  it("is linked from the README's first screen", () => {
    const first = readFileSync(join(REPO, "README.md"), "utf8").split("\n").slice(0, 30).join("\n");
    expect(first).toContain("(docs/locks.md)");
  });

  it("grows soak by soak: a soak's row replaces the page's, a row the preset changed since is dropped, a soak of an old row is refused", () => {
    const rows = loadPreset(LOCKS_PRESET).configurations;
    const [first, second] = rows;
    /** A soak directory whose summary holds `configs` (no run directories: the library is not known). */
    const soak = (configs: Array<{ name: string; options: Record<string, unknown>; status: string }>): string => {
      const dir = tempRunDir("fc-locks-soak-");
      const configurations = configs.map((c) => ({
        name: c.name, description: "", options: c.options, expect: { kind: "observe" }, counts: { valid: 1, invalid: 0, unknown: 0, crashed: 0, interrupted: 0, not_run: 0 },
        anomalies: {}, exercised: null, runs: [{ seed: 5, status: c.status, argv: ["--store", dir, "--seed", "5"], anomaly_types: [] }],
      }));
      writeFileSync(join(dir, "summary.json"), JSON.stringify({ kind: "soak-summary", matrix: { name: LOCKS_PRESET }, started: "t", wall_s: 60, seed: 1, verdict: "OBSERVED", configurations }));
      return dir;
    };
    const a = locksDataFrom([soak([{ ...first, status: "valid" }])], null).data;
    expect(a.configurations.map((c) => [c.name, c.runs[0].argv])).toEqual([[first.name, ["--seed", "5"]]]);
    // A second soak adds its row; the first's stays, from the first soak.
    const b = locksDataFrom([soak([{ ...second, status: "invalid" }])], a).data;
    expect(b.configurations.map((c) => [c.name, c.soak])).toEqual([[first.name, 0], [second.name, 1]]);
    // The preset's row changed since: dropped from the page's data, and a soak of the old row is refused.
    const changed = { ...b, configurations: b.configurations.map((c) => (c.name === first.name ? { ...c, options: { ...c.options, seedless: true } } : c)) };
    const c = locksDataFrom([], changed);
    expect([c.dropped, c.data.configurations.map((x) => x.name), c.data.soaks.length]).toEqual([[first.name], [second.name], 1]);
    expect(() => locksDataFrom([soak([{ ...first, options: { ...first.options, nemesis: "kill" }, status: "valid" }])], null)).toThrow(/ran with options .* soak it again/);
  });

  it("npm run docs:locks refuses what is not a soak of the preset with 254, naming it, and writes nothing", async () => {
    const before = readFileSync(PAGE, "utf8");
    const data = readFileSync(DATA, "utf8");
    const dir = tempRunDir("fc-locks-");
    const r = await promisify(execFile)(process.execPath, ["--import", "tsx", join(REPO, "scripts", "docs-locks.ts"), dir], { cwd: REPO }).then(
      () => ({ code: 0, stderr: "" }),
      (e: { code: number; stderr: string }) => e,
    );
    expect(r.code).toBe(254);
    expect(r.stderr).toContain(`docs:locks ${dir}: no summary.json there`);
    expect(readFileSync(PAGE, "utf8")).toBe(before);
    expect(readFileSync(DATA, "utf8")).toBe(data);
  });
});
