// When a built command must run itself again under tsx: a --client that names a
// TypeScript module, in either spelling of the option. (The re-run itself is what
// test/clients/adapter.test.ts's runs of the built command go through.)
import { describe, expect, it } from "vitest";
import { namesTypeScript } from "../../lib/index.ts";

describe("namesTypeScript", () => {
  it("finds a TypeScript module given to the option, as --client X or --client=X", () => {
    expect(namesTypeScript(["--client", "./my-lock.ts"], "client")).toBe(true);
    expect(namesTypeScript(["--time-limit", "5", "--client=/abs/lock.mts"], "client")).toBe(true);
  });
  it("not a shipped client, a JavaScript module, or a .ts value of another option", () => {
    expect(namesTypeScript(["--client", "redlock"], "client")).toBe(false);
    expect(namesTypeScript(["--client", "./my-lock.mjs"], "client")).toBe(false);
    expect(namesTypeScript(["--store", "runs.ts", "--client", "redis"], "client")).toBe(false);
    expect(namesTypeScript(["--client"], "client")).toBe(false);
  });
});
