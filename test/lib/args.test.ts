// The one option parser every command uses.
import { describe, it, expect } from "vitest";
import { parseArgs, helpText, noPositional, type OptionSpec } from "../../lib/index.ts";
import { BadInput } from "../../lib/index.ts";

const specs: OptionSpec[] = [
  { name: "port", kind: "int", default: 0, min: 0, max: 65535, help: "port" },
  { name: "log", kind: "string", default: undefined, required: true, help: "log file" },
  { name: "json", kind: "flag", default: false, help: "json output" },
  { name: "fence", kind: "on-off", default: true, help: "fencing" },
  { name: "nemesis", kind: "list", default: ["pause"], choices: ["pause", "kill"], help: "faults" },
];

describe("lib/args", () => {
  it("parses values, flags and lists, with defaults", () => {
    const { options } = parseArgs(["--port", "7", "--log=x", "--json", "--nemesis", "kill,pause"], specs);
    expect(options).toMatchObject({ port: 7, log: "x", json: true, fence: true, nemesis: ["kill", "pause"] });
  });

  it("names the option in every refusal", () => {
    const bad: Array<[string[], RegExp]> = [
      [["--log", "x", "--port", "70000"], /--port must be at most 65535/],
      [["--port", "1"], /--log is required/],
      [["--log", "x", "--json=1"], /--json takes no value/],
      [["--log", "x", "--fence", "yes"], /--fence must be on or off/],
      [["--log", "x", "--nemesis", "meteor"], /--nemesis: unknown value "meteor"/],
      [["--log", "x", "--what"], /unknown option --what/],
    ];
    for (const [argv, message] of bad) expect(() => parseArgs(argv, specs)).toThrow(message);
    expect(() => parseArgs(["--port", "x", "--log", "y"], specs)).toThrow(BadInput);
  });

  it("does not ask for required options when --help is given, and lists every option", () => {
    expect(parseArgs(["--help"], specs).help).toBe(true);
    const text = helpText("usage: x", specs);
    for (const s of specs) expect(text).toContain(`--${s.name}`);
    expect(text).toContain("(required)");
  });

  it("refuses stray arguments", () => {
    expect(() => noPositional(["stray"])).toThrow(/unexpected argument "stray"/);
    expect(() => noPositional([])).not.toThrow();
  });
});
