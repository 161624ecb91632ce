// npm run experiment -- dead-session --quick: a killed holder's advisory lock is
// free at once; a frozen one's never, unless idle_session_timeout ends its session.
import { describe, it, expect } from "vitest";
import { processesMentioning } from "../helpers.ts";
import { quick } from "./stored.ts";

describe("npm run experiment -- dead-session", () => {
  it("--quick: killed frees the lock at once; frozen only with idle_session_timeout (2 s)", async () => {
    const { store, results } = await quick("dead-session");
    const trials = results.data.trials as Array<{ settings: string; fate: string; released_ms: number | null }>;
    const of = (settings: string, fate: string) => trials.find((t) => t.settings === settings && t.fate === fate)!.released_ms;
    expect(of("defaults", "killed")).toBeLessThan(1000);
    expect(of("defaults", "frozen")).toBeNull();
    expect(of("idle-session-timeout", "frozen")).toBeGreaterThan(1000);
    expect(of("idle-session-timeout", "frozen")).toBeLessThan(3500);
    expect(processesMentioning(store)).toEqual([]);
  });
});
