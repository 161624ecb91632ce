// Each experiment from its CLI with --quick, as the tests of issue 14 ask: stored
// under <store>/experiments/<name>/<timestamp>/ with results.json, a report.html
// that needs nothing from the network, and the runs it made; and the CLI's
// refusals (exit 254, nothing stored).
import { describe, it, expect } from "vitest";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { tempRunDir, runCli, processesMentioning } from "../helpers.ts";
import { stored } from "./stored.ts";

describe("npm run experiment", () => {
  it("--list names every experiment; an unknown one or a bad option is refused with 254 and nothing stored", async () => {
    const list = runCli("experiment", ["--list"]);
    expect(await list.exit).toBe(0);
    expect(list.stdout()).toMatch(/^fairness +many clients/m);
    expect(list.stdout()).toMatch(/^renew +the same SIGSTOP pauses/m);
    expect(list.stdout()).toMatch(/^contention +one hot key/m);
    expect(list.stdout()).toMatch(/^ttl-liveness +the holder SIGKILLed while holding/m);
    expect(list.stdout()).toMatch(/^keys +many short-lived locks/m);
    const store = tempRunDir("fc-exp-");
    const unknown = runCli("experiment", ["nope", "--store", store]);
    expect(await unknown.exit).toBe(254);
    expect(unknown.stderr()).toMatch(/no experiment named "nope"; did you mean renew\? \(experiments: fairness, renew, contention, ttl-liveness, keys/);
    const bad = runCli("experiment", ["renew", "--ttl", "soon", "--store", store]);
    expect(await bad.exit).toBe(254);
    expect(bad.stderr()).toMatch(/--ttl/);
    expect(existsSync(join(store, "experiments"))).toBe(false);
  });
});
