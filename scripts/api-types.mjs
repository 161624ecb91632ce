// The published declaration of api/test-options.ts (dist/types/api/test-options.d.ts):
// TestOptions spelled out from the option table the build's own bundle of that
// file exports, each option with its help as its comment, so that an editor shows
// a user what --help says. The type the sources check against is inferred from the
// same table (lib/args.ts OptionsOf); test/typecheck.test.ts holds the two equal.

const camel = (name) => name.replace(/-([a-z])/g, (_, c) => c.toUpperCase());
/** A choice as a type: "semaphore:N" is semaphore:2, semaphore:3, ... */
const choiceType = (c) => (c.endsWith(":N") ? `\`${c.slice(0, -1)}\${number}\`` : JSON.stringify(c));

/** The type of one option's value, as lib/args.ts OptionValueOf gives it. */
function valueType(spec) {
  switch (spec.kind) {
    case "int":
    case "number":
      return "number";
    case "on-off":
      return 'boolean | "on" | "off"';
    case "flag":
      return "boolean";
    case "list":
      return spec.choices ? `string | Array<${spec.choices.map(choiceType).join(" | ")}>` : "string | Array<string | number>";
    default:
      return spec.choices ? spec.choices.map(choiceType).join(" | ") : "string";
  }
}

const shownDefault = (spec) =>
  spec.defaultText ?? (spec.default === undefined ? undefined : Array.isArray(spec.default) ? spec.default.join(",") : String(spec.default));

/** The text of the declaration file. */
export function testOptionsDeclaration(specs) {
  const rows = specs.map((spec) => {
    const shown = shownDefault(spec);
    const help = `${spec.help}${shown === undefined ? "" : ` (default: ${shown})`}`.replace(/\*\//g, "*\\/");
    return `  /** ${help} */\n  ${camel(spec.name)}?: ${valueType(spec)};`;
  });
  return [
    "// The options of `fencecheck test` as the API takes them, by their camelCase",
    "// names (timeLimit is --time-limit), each with the command's own help. Written by",
    "// the build (scripts/api-types.mjs) from the options' declarations.",
    "export interface TestOptions {",
    ...rows,
    "}",
    "/** The options' declarations themselves: name, kind, default, choices and help, as `fencecheck test --help` shows them. */",
    "export declare const TEST_OPTIONS: ReadonlyArray<{ name: string; kind: \"int\" | \"number\" | \"string\" | \"on-off\" | \"list\" | \"flag\"; default: string | number | boolean | string[] | undefined; help: string; min?: number; max?: number; choices?: readonly string[]; defaultText?: string }>;",
    "",
  ].join("\n");
}
