// `fencecheck setup --extras toxiproxy`: what it says and does where Go is
// missing or too old (bad input, nothing made), and that a build already in the
// cache is found at once. The build itself is the suite's pretest (`fencecheck
// setup`), whose binary the proxy conformance tests run.
import { chmodSync, existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runCli, tempDir } from "../helpers.ts";
import { toxiproxyBinary } from "../../toxiproxy/index.ts";

describe("fencecheck setup --extras toxiproxy", () => {
  const dir = tempDir("fc-go-");
  const cache = join(dir, "cache");
  // Debian 12's golang-go, as far as `go env GOVERSION` goes.
  const oldGo = join(dir, "go");
  writeFileSync(oldGo, "#!/bin/sh\necho go1.19.8\n");
  chmodSync(oldGo, 0o755);

  it.each([
    ["too old a Go", oldGo, /needs Go 1\.23 or newer, and .*go is go1\.19\.8: install Go.s release from https:\/\/go\.dev\/dl .*then run fencecheck setup --extras toxiproxy/],
    ["no Go at all", join(dir, "no-such-go"), /needs Go 1\.23 or newer, and FENCECHECK_GO=.*no-such-go is not an executable/],
  ])("with %s: 254, the message says what is wrong and what to do, and nothing is made", async (_, go, message) => {
    const r = runCli("setup", ["--extras", "toxiproxy"], { FENCECHECK_CACHE: cache, FENCECHECK_GO: go });
    expect(await r.exit, r.stderr()).toBe(254);
    expect(r.stderr()).toMatch(message);
    expect(existsSync(cache)).toBe(false);
  });

  it("--list says it cannot be had here", async () => {
    const r = runCli("setup", ["--list"], { FENCECHECK_CACHE: cache, FENCECHECK_GO: oldGo });
    expect(await r.exit).toBe(0);
    expect(r.stdout()).toMatch(/^toxiproxy +missing, and cannot be had here/m);
  });

  it("built (the suite's pretest did it): found at once, and no Go is asked", async () => {
    expect(existsSync(toxiproxyBinary()), `no ${toxiproxyBinary()}: run fencecheck setup --extras toxiproxy`).toBe(true);
    const started = performance.now();
    const r = runCli("setup", ["--extras", "toxiproxy"], { FENCECHECK_GO: oldGo });
    expect(await r.exit, r.stderr()).toBe(0);
    expect(r.stderr()).toMatch(/ready for toxiproxy$/m);
    expect(performance.now() - started).toBeLessThan(5000);
  });
});
