import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { BadInput } from "../../lib/index.ts";
import { readHistory, readResourceLog } from "../../store/index.ts";
import { decision, History, tempDir } from "./build.ts";

const HEADER = `{"format":1,"kind":"header","run":"r","workload":"fenced-write","backend":"redis","fencing":true}`;
const line = (o: Record<string, unknown>): string => JSON.stringify(o);
const inv = (index: number, time: number, process: number | string = 0, f = "acquire", value: Record<string, unknown> = { ttl_ms: 100 }) =>
  line({ index, time, process, type: "invoke", f, key: "k", value });
const ok = (index: number, time: number, process: number | string = 0, f = "acquire", value: Record<string, unknown> = { owner: "o", fence: 1, ttl_ms: 100 }) =>
  line({ index, time, process, type: "ok", f, key: "k", value });

function file(text: string, name = "history.ndjson"): string {
  const path = join(tempDir(), name);
  writeFileSync(path, text);
  return path;
}

async function badInput(p: Promise<unknown>): Promise<string> {
  const err = await p.then(() => null, (e: unknown) => e);
  expect(err).toBeInstanceOf(BadInput);
  return (err as Error).message;
}

describe("readHistory", () => {
  it("reads a header and events", async () => {
    const h = new History();
    h.acquire(0, "k", [1, 2], "a", 1);
    const { header, events, warnings } = await readHistory(file(h.ndjson()));
    expect(header.workload).toBe("fenced-write");
    expect(events.map((e) => e.index)).toEqual([0, 1]);
    expect(warnings).toEqual([]);
  });

  it("accepts a file with only a header", async () => {
    const { events } = await readHistory(file(HEADER + "\n"));
    expect(events).toEqual([]);
  });

  it("orders lines by (time, index) when a killed run left them out of order", async () => {
    const text = [HEADER, ok(1, 20), inv(0, 10), inv(2, 30, 1), ok(3, 30, 1)].join("\n") + "\n";
    const { events } = await readHistory(file(text));
    expect(events.map((e) => e.index)).toEqual([0, 1, 2, 3]);
  });

  it("skips a cut-short last line with a warning", async () => {
    const text = [HEADER, inv(0, 10), ok(1, 20)].join("\n") + "\n" + `{"index":2,"time":30,"proc`;
    const { events, warnings } = await readHistory(file(text));
    expect(events).toHaveLength(2);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/history\.ndjson line 4: .*cut short/);
  });

  it("keeps a whole last line that only lacks its newline", async () => {
    const { events, warnings } = await readHistory(file([HEADER, inv(0, 10), ok(1, 20)].join("\n")));
    expect(events).toHaveLength(2);
    expect(warnings).toEqual([]);
  });

  it("names the line of malformed JSON in the middle", async () => {
    const text = [HEADER, inv(0, 10), `{"index":1,"time":`, ok(2, 20)].join("\n") + "\n";
    expect(await badInput(readHistory(file(text)))).toMatch(/^history\.ndjson line 3: not valid JSON/);
  });

  it("refuses a cut line that is not the last one even at the end of a chunk", async () => {
    // A broken line followed by a newline is not "cut short": the writer went on.
    const text = [HEADER, inv(0, 10), `{"index":1,"time":`].join("\n") + "\n";
    expect(await badInput(readHistory(file(text)))).toMatch(/line 3: not valid JSON/);
  });

  it.each([
    [{ index: -1, time: 0, process: 0, type: "invoke", f: "read" }, `"index" must be an integer >= 0`],
    [{ index: 0, time: 1.5, process: 0, type: "invoke", f: "read" }, `"time" must be an integer >= 0`],
    [{ index: 0, time: 0, process: "p", type: "invoke", f: "read" }, `"process" must be an integer or "nemesis"`],
    [{ index: 0, time: 0, process: 0, type: "done", f: "read" }, `"type" must be one of invoke, ok, fail, info, notice`],
    [{ index: 0, time: 0, process: 0, type: "invoke", f: 3 }, `"f" must be a string`],
    [{ index: 0, time: 0, process: 0, type: "invoke", f: "read", key: 1 }, `"key" must be a string`],
    [{ index: 0, time: 0, process: 0, type: "invoke", f: "read", value: [] }, `"value" must be an object`],
    [{ index: 0, time: 0, process: 0, type: "invoke", f: "read", error: 5 }, `"error" must be a string`],
    [{ index: 0, time: 0, process: "nemesis", type: "invoke", f: "start-pause" }, `a nemesis event must have "type" info`],
    [{ index: 0, time: 0, process: 0, type: "invoke", f: "write", key: "k", value: { fence: 1 } }, `a write invoke needs "value.owner" (a string)`],
    [{ index: 0, time: 0, process: 0, type: "invoke", f: "write", key: "k", value: { owner: "o", fence: "1" } }, `"value.fence" must be an integer or null`],
    [[1, 2], "not a JSON object"],
  ])("refuses an invalid event %j", async (event, message) => {
    const text = [HEADER, JSON.stringify(event)].join("\n") + "\n";
    expect(await badInput(readHistory(file(text)))).toBe(`history.ndjson line 2: ${message}`);
  });

  it("refuses a missing or wrong header", async () => {
    expect(await badInput(readHistory(file("")))).toMatch(/line 1: missing header/);
    expect(await badInput(readHistory(file(inv(0, 1) + "\n")))).toMatch(/line 1: the first line must be the header/);
    expect(await badInput(readHistory(file(HEADER.replace(`"format":1`, `"format":3`) + "\n")))).toMatch(/line 1: "format" 3 is not supported \(this reader knows formats 1 and 2\)/);
  });

  it("refuses an empty line", async () => {
    expect(await badInput(readHistory(file([HEADER, "", inv(0, 1)].join("\n") + "\n")))).toBe("history.ndjson line 2: empty line");
  });

  it("refuses a repeated index", async () => {
    const text = [HEADER, inv(0, 10), ok(0, 20)].join("\n") + "\n";
    expect(await badInput(readHistory(file(text)))).toMatch(/line 3: "index" 0 was already used on line 2/);
  });

  describe("structure", () => {
    it("refuses a completion with no open invoke", async () => {
      const text = [HEADER, ok(0, 10)].join("\n") + "\n";
      expect(await badInput(readHistory(file(text)))).toMatch(/line 2: process 0 completes "acquire" with ok but has no open invoke/);
    });

    it("refuses a second completion of one invoke", async () => {
      const text = [HEADER, inv(0, 10), ok(1, 20), ok(2, 30)].join("\n") + "\n";
      expect(await badInput(readHistory(file(text)))).toMatch(/line 4: second completion \(ok\) of the "acquire" process 0 invoked on line 2, already completed on line 3/);
    });

    it("refuses a completion whose f differs from its invoke", async () => {
      const text = [HEADER, inv(0, 10), ok(1, 20, 0, "release", { released: true })].join("\n") + "\n";
      expect(await badInput(readHistory(file(text)))).toMatch(/line 3: process 0 completes "release" but its open invoke on line 2 is "acquire"/);
    });

    it("refuses an operation of a process after it got info", async () => {
      const info = line({ index: 1, time: 20, process: 0, type: "info", f: "acquire", key: "k", error: "timeout" });
      const text = [HEADER, inv(0, 10), info, inv(2, 30)].join("\n") + "\n";
      expect(await badInput(readHistory(file(text)))).toMatch(/line 4: process 0 invokes "acquire" after its operation got info on line 3/);
    });

    it("refuses an invoke while the process has one outstanding", async () => {
      const text = [HEADER, inv(0, 10), inv(1, 20)].join("\n") + "\n";
      expect(await badInput(readHistory(file(text)))).toMatch(/line 3: process 0 invokes "acquire" while its "acquire" invoked on line 2 is still outstanding/);
    });

    it("names the file's lines even when it had to reorder them", async () => {
      const text = [HEADER, ok(1, 5), inv(0, 10)].join("\n") + "\n";
      expect(await badInput(readHistory(file(text)))).toMatch(/line 2: process 0 completes "acquire" with ok but has no open invoke/);
    });

    it("lets several processes and the nemesis interleave", async () => {
      const nem = line({ index: 2, time: 25, process: "nemesis", type: "info", f: "start-pause", value: { targets: ["c1"] } });
      const text = [HEADER, inv(0, 10, 0), inv(1, 20, 1), nem, ok(3, 30, 1), ok(4, 40, 0)].join("\n") + "\n";
      const { events } = await readHistory(file(text));
      expect(events).toHaveLength(5);
    });
  });

  it("reads across chunk boundaries, multi-byte text included", async () => {
    const h = new History();
    const n = 40_000;
    for (let i = 0; i < n; i++) h.write(i % 7, "k", [i * 2, i * 2 + 1], `ö-owner-${i % 7}`, i, `данные ${"é".repeat(100)} ${i}`);
    const { events } = await readHistory(file(h.ndjson()));
    expect(events).toHaveLength(2 * n);
    expect(events[2 * n - 1].value?.data).toBe(`данные ${"é".repeat(100)} ${n - 1}`);
  });

  it("says when the file is missing", async () => {
    expect(await badInput(readHistory(join(tempDir(), "history.ndjson")))).toMatch(/history\.ndjson: no such file/);
  });
});

describe("readResourceLog", () => {
  const d1 = JSON.stringify(decision(1, 1, "k", 0, "a", 1, null, true, "x"));
  const d2 = JSON.stringify(decision(2, 2, "k", 1, "b", 2, 1, true, "y"));

  it("is null when the run has no resource log", async () => {
    expect(await readResourceLog(join(tempDir(), "resource.ndjson"))).toBeNull();
  });

  it("reads decisions in file order", async () => {
    const log = await readResourceLog(file(`${d1}\n${d2}\n`, "resource.ndjson"));
    expect(log?.decisions.map((d) => d.seq)).toEqual([1, 2]);
  });

  it("skips a cut-short last line with a warning", async () => {
    const log = await readResourceLog(file(`${d1}\n${d2.slice(0, 30)}`, "resource.ndjson"));
    expect(log?.decisions).toHaveLength(1);
    expect(log?.warnings[0]).toMatch(/resource\.ndjson line 2: .*cut short/);
  });

  it.each([
    ["seq", 0, `"seq" must be an integer >= 1`],
    ["op", "delete", `"op" must be write or read`],
    ["key", null, `"key" must be a string`],
    ["process", "x", `"process" must be an integer`],
    ["owner", 3, `"owner" must be a string`],
    ["fence", "2", `"fence" must be an integer or null`],
    ["max_before", undefined, `"max_before" must be an integer or null`],
    ["accepted", "yes", `"accepted" must be true, false or null`],
    ["fencing", undefined, `"fencing" must be true or false`],
    ["order", 0, `"order" must be an integer >= 1 or null`],
    ["order", "3", `"order" must be an integer >= 1 or null`],
    ["order", null, `"order" may be null only where "accepted" is null (a decision that took effect, or was refused, has its place)`],
  ])("refuses a bad %s", async (field, value, message) => {
    const bad = JSON.stringify({ ...decision(2, 2, "k", 1, "b", 2, 1, true, "y"), [field]: value });
    expect(await badInput(readResourceLog(file(`${d1}\n${bad}\n${d2}\n`, "resource.ndjson")))).toBe(`resource.ndjson line 2: ${message}`);
  });
});
