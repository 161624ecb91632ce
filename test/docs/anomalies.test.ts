// docs/anomalies.md is the reference a reader lands on from a report's anomaly
// type (results.json anomaly_types, the report's headings, other pages' links
// to anomalies.md#<type>): one `### \`type\`` heading per type the checker can
// report, so each has its anchor, and none for a type the checker lost or never
// had. A type added to the checker without its entry fails here.
import { describe, it, expect } from "vitest";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { ANOMALY_TYPES, LIVENESS_TYPES } from "../../store/events.ts";
import { STRICT_VIOLATIONS } from "../../checker/analyze.ts";
import { ORDER } from "../../checker/reference/verdict.ts";
import { readFileSync } from "node:fs";
import { REPO } from "../helpers.ts";
import { readPage, scanPage } from "./markdown.ts";

const PAGE = "docs/anomalies.md";
/** Every type the checker can report: the history's, the model check's (--model strict), and the liveness findings (--liveness strict). */
const REPORTED: readonly string[] = [...ANOMALY_TYPES, ...STRICT_VIOLATIONS, ...LIVENESS_TYPES];

/** What is wrong with a page's ### `type` headings against `types`: empty when each has exactly one. */
function headingProblems(page: string, types: readonly string[]): string[] {
  // Headings in code blocks are examples, not the page's: the scanner leaves them out.
  const named = scanPage(page)
    .headings.filter((h) => h.level === 3)
    .flatMap((h) => {
      const m = /^`([^`]+)`$/.exec(h.text);
      return m ? [{ n: h.n, type: m[1] }] : [];
    });
  const lines = new Map<string, number[]>();
  for (const h of named) lines.set(h.type, [...(lines.get(h.type) ?? []), h.n]);
  const missing = types.filter((t) => !lines.has(t));
  const extra = [...lines.keys()].filter((t) => !types.includes(t)).map((t) => `${t} (line ${lines.get(t)!.join(", ")})`);
  const repeated = [...lines.entries()].filter(([, ns]) => ns.length > 1).map(([t, ns]) => `${t} (lines ${ns.join(", ")})`);
  return [
    ...(missing.length ? [`no ### \`type\` heading for: ${missing.join(", ")}`] : []),
    ...(extra.length ? [`headings for types the checker does not report: ${extra.join(", ")}`] : []),
    ...(repeated.length ? [`more than one heading for: ${repeated.join(", ")}`] : []),
  ];
}

describe(PAGE, () => {
  it("has exactly one ### `type` heading for each anomaly type the checker reports, and none for a type it lacks", () => {
    expect(existsSync(join(REPO, PAGE)), `${PAGE} is missing: it must have a heading ### \`type\` for each of ${REPORTED.join(", ")}`).toBe(true);
    const problems = headingProblems(readPage(PAGE), REPORTED);
    expect(problems, `${PAGE}:\n${problems.join("\n")}`).toEqual([]);
  });

  it("(the check itself) names the missing, the extra and the repeated, and reads no heading in code", () => {
    const page = ["# Anomalies", "", "### `a`", "", "### `b`", "", "### `zzz`", "", "### `a`", "", "```", "### `c`", "```", "", "### `c` and more words"].join("\n");
    expect(headingProblems(page, ["a", "b", "c"])).toEqual([
      "no ### `type` heading for: c",
      "headings for types the checker does not report: zzz (line 7)",
      "more than one heading for: a (lines 3, 9)",
    ]);
  });

  it("history-format.md's order of anomaly_types is the order both checkers list them in", () => {
    const text = readFileSync(join(REPO, "docs/history-format.md"), "utf8").replace(/\s+/g, " ");
    const listed = /`anomaly_types` lists the types found in this order: ([a-z, -]+);/.exec(text);
    expect(listed, "no order of anomaly_types in docs/history-format.md").not.toBeNull();
    const order = listed![1].split(", ");
    // The fast checker: its anomalies in ANOMALY_TYPES' order, then the model check's, then liveness (checker/analyze.ts).
    expect(order).toEqual(REPORTED);
    expect(order).toEqual(ORDER);
  });
});
