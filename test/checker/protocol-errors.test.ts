// An adapter program that broke the protocol (docs/history-format.md
// "protocol-errors.ndjson"): both checkers, on the hand-written runs of
// reference-cases.ts, give UNKNOWN with the count, INVALID when an anomaly is
// found as well, and leave a run whose adapter only timed out as it was; the
// file's count is stats.protocol_errors, also when its last line was cut short.
import { describe, it, expect } from "vitest";
import { appendFileSync } from "node:fs";
import { join } from "node:path";
import { checkRun } from "../../checker/index.ts";
import { referenceCheck } from "../../checker/reference/index.ts";
import { tempRunDir } from "../helpers.ts";
import { cases, writeCase } from "./reference-cases.ts";

const named = (name: string) => cases().find((c) => c.name === name)!;

/** Both checkers' verdict, protocol error count and unknown reasons on a case's run directory. */
async function both(dir: string) {
  const fast = (await checkRun(dir)).results;
  const ref = (await referenceCheck(dir)).results;
  const of = (r: { valid: unknown; anomaly_types: string[]; stats: Record<string, unknown> }) => ({
    valid: r.valid, types: r.anomaly_types, protocol_errors: r.stats.protocol_errors, unknown_reasons: r.stats.unknown_reasons,
  });
  return { fast: of(fast), reference: of(ref) };
}

describe("protocol errors recorded beside the history", () => {
  for (const [name, valid, count] of [
    ["protocol-errors-outstanding-and-idle-unknown", "unknown", 2],
    ["protocol-errors-with-an-anomaly-invalid", false, 1],
    ["adapter-timeout-alone-is-an-ordinary-info", true, 0],
  ] as const)
    it(`${name}: ${valid === true ? "VALID" : valid === false ? "INVALID" : "UNKNOWN"}, protocol_errors ${count}, the same in both checkers`, async () => {
      const c = named(name);
      const { fast, reference } = await both(writeCase(c, tempRunDir("fc-protocol-")));
      expect(fast).toEqual({ valid, types: c.types, protocol_errors: count, unknown_reasons: c.unknown ?? [] });
      expect(reference).toEqual(fast);
    });

  it("a last line cut short by a kill still counts (the fast checker warns of it)", async () => {
    const dir = writeCase(named("protocol-errors-outstanding-and-idle-unknown"), tempRunDir("fc-protocol-"));
    appendFileSync(join(dir, "protocol-errors.ndjson"), `{"time":15000000,"worker":"worker-2","cli`);
    const { fast, reference } = await both(dir);
    expect(fast.protocol_errors).toBe(3);
    expect(reference.protocol_errors).toBe(3);
    expect(fast.unknown_reasons).toEqual([expect.stringContaining("broke the protocol 3 times (adapter-bad-line ×2, ? ×1;")]);
    expect(reference.unknown_reasons).toEqual(fast.unknown_reasons);
    expect((await checkRun(dir)).warnings).toContainEqual(expect.stringMatching(/^protocol-errors\.ndjson line 3: not a JSON object/));
  });
});
