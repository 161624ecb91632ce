// run.json's server versions come from the programs themselves the first time,
// and from the cache while each program's file is unchanged: a kept answer is
// used without running the program, and a program whose file changed is asked
// again.
import { describe, it, expect } from "vitest";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { serverVersions } from "../../runner/server-versions.ts";
import { tempRunDir } from "../helpers.ts";

type Kept = Record<string, { stamp: string; version: string }>;
const read = (file: string): Kept => JSON.parse(readFileSync(file, "utf8")) as Kept;

describe("server versions", () => {
  it("are asked once, kept with each program's file, and asked again when the file changes", async () => {
    const cache = join(tempRunDir("fc-versions-"), "server-versions.json");
    const asked = await serverVersions(cache);
    expect(asked["redis-server"]).toMatch(/^Redis server v=/);
    const kept = read(cache);
    expect(kept["redis-server"].version).toBe(asked["redis-server"]);
    expect(kept["redis-server"].stamp).toMatch(/redis-server:\d+:[\d.]+$/);

    // The same file: the kept answer is taken as it is, without running the program.
    writeFileSync(cache, JSON.stringify({ ...kept, "redis-server": { ...kept["redis-server"], version: "kept, not asked" } }));
    expect((await serverVersions(cache))["redis-server"]).toBe("kept, not asked");

    // Another file (an upgrade): asked again, and the cache follows.
    writeFileSync(cache, JSON.stringify({ ...kept, "redis-server": { stamp: "/usr/bin/redis-server:1:1", version: "an older redis" } }));
    expect((await serverVersions(cache))["redis-server"]).toBe(asked["redis-server"]);
    expect(read(cache)["redis-server"]).toEqual(kept["redis-server"]);
  });

  it("a cache that cannot be read is asked past", async () => {
    const cache = join(tempRunDir("fc-versions-"), "server-versions.json");
    writeFileSync(cache, "{ not json");
    expect((await serverVersions(cache))["redis-server"]).toMatch(/^Redis server v=/);
    expect(read(cache)["redis-server"].version).toMatch(/^Redis server v=/);
  });
});
