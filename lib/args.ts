// A small option parser driven by a table, so --help, defaults and the messages
// for bad values all come from one description of each option. Every command of
// ours (test:jepsen, the resource and proxy processes, the benchmark) uses it, so
// a bad option reads the same everywhere: a BadInput naming the option.
// BadInput comes from exit.ts, not index.ts, because index.ts re-exports this file.
import { BadInput } from "./exit.ts";
import { didYouMean } from "./nearest.ts";

/** `flag` takes no value: its presence sets it (default false). */
export type OptionKind = "int" | "number" | "string" | "on-off" | "list" | "flag";

export type OptionValue = string | number | boolean | string[];

export interface OptionSpec {
  name: string;
  kind: OptionKind;
  default: OptionValue | undefined;
  help: string;
  min?: number;
  max?: number;
  /** The values it takes; one ending in ":N" stands for its prefix and a whole number after the colon ("semaphore:N": semaphore:2). */
  choices?: readonly string[];
  /** Shown instead of the default value in --help. */
  defaultText?: string;
  /** Leaving the option out is a BadInput (unless --help was asked for). */
  required?: boolean;
}

export type ParsedOptions = Record<string, OptionValue | undefined>;

// The type of the options a table declares, for a program that passes them by
// their camelCase names (the API's TestOptions): each option's value type follows
// its kind and choices, so that a change to a declaration changes the type.
type Camel<S extends string> = S extends `${infer H}-${infer T}` ? `${H}${Capitalize<Camel<T>>}` : S;
/** A choice as a value: "semaphore:N" is semaphore:2, semaphore:3, ... */
type ChoiceValue<C> = C extends `${infer P}:N` ? `${P}:${number}` : C;
/** What a program may give for one option: the values the command line takes, as they are typed (on-off as a boolean too, a list as an array too). */
export type OptionValueOf<S> = S extends { kind: "int" | "number" }
  ? number
  : S extends { kind: "on-off" }
    ? boolean | "on" | "off"
    : S extends { kind: "flag" }
      ? boolean
      : S extends { kind: "list"; choices: readonly (infer C)[] }
        ? string | ChoiceValue<C>[]
        : S extends { kind: "list" }
          ? string | (string | number)[]
          : S extends { kind: "string"; choices: readonly (infer C)[] }
            ? ChoiceValue<C>
            : string;
/** Every option of a table, optional, by its camelCase name (--time-limit: timeLimit). */
export type OptionsOf<S extends { name: string }> = { [K in S as Camel<K["name"]>]?: OptionValueOf<K> };

/**
 * Whether a value is one of the choices. Where a choice takes a number
 * ("semaphore:N"), any value whose part before a colon names a choice passes
 * here ("semaphore", "rw:2"): the option's own reading says what is wrong with
 * the number, or with a number where none belongs.
 */
export function isChoice(choices: readonly string[], raw: string): boolean {
  if (choices.includes(raw)) return true;
  if (!choices.some((c) => c.endsWith(":N"))) return false;
  const base = raw.split(":")[0];
  return choices.some((c) => c.split(":")[0] === base);
}

function convert(spec: OptionSpec, raw: string): OptionValue {
  const where = `--${spec.name}`;
  switch (spec.kind) {
    case "int":
    case "number": {
      const n = Number(raw);
      if (raw.trim() === "" || !Number.isFinite(n) || (spec.kind === "int" && !Number.isInteger(n)))
        throw new BadInput(`${where} must be ${spec.kind === "int" ? "an integer" : "a number"}, got ${JSON.stringify(raw)}`);
      if (spec.min !== undefined && n < spec.min) throw new BadInput(`${where} must be at least ${spec.min}, got ${raw}`);
      if (spec.max !== undefined && n > spec.max) throw new BadInput(`${where} must be at most ${spec.max}, got ${raw}`);
      return n;
    }
    case "on-off":
      if (raw !== "on" && raw !== "off") throw new BadInput(`${where} must be on or off, got ${JSON.stringify(raw)}`);
      return raw === "on";
    case "list": {
      const items = raw.split(",").map((s) => s.trim()).filter(Boolean);
      if (items.length === 0) throw new BadInput(`${where} needs at least one value`);
      for (const item of items)
        if (spec.choices && !isChoice(spec.choices, item))
          throw new BadInput(`${where}: unknown value ${JSON.stringify(item)}; choose from ${spec.choices.join(", ")}`);
      return items;
    }
    case "string":
      if (spec.choices && !isChoice(spec.choices, raw))
        throw new BadInput(`${where}: unknown value ${JSON.stringify(raw)}; choose from ${spec.choices.join(", ")}`);
      return raw;
    case "flag":
      // parseArgs never hands a flag a value; `--json=yes` is refused before this.
      return true;
  }
}

export function parseArgs(argv: string[], specs: readonly OptionSpec[]): { options: ParsedOptions; positional: string[]; help: boolean } {
  const byName = new Map(specs.map((s) => [s.name, s]));
  const options: ParsedOptions = {};
  for (const s of specs) options[s.name] = s.default;
  const positional: string[] = [];
  let help = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "--help" || arg === "-h") {
      help = true;
      continue;
    }
    if (!arg.startsWith("--")) {
      positional.push(arg);
      continue;
    }
    const eq = arg.indexOf("=");
    const name = arg.slice(2, eq < 0 ? undefined : eq);
    const spec = byName.get(name);
    if (!spec) throw new BadInput(`unknown option --${name}${didYouMean(name, byName.keys(), "--")} (see --help)`);
    let raw: string | undefined = eq < 0 ? undefined : arg.slice(eq + 1);
    if (spec.kind === "flag") {
      // A flag never takes the next argument, so `--json 5` leaves 5 positional
      // rather than quietly eating it; an inline value is a mistake worth naming.
      if (raw !== undefined) throw new BadInput(`--${name} takes no value, got ${JSON.stringify(raw)}`);
      options[name] = true;
      continue;
    }
    if (raw === undefined) {
      raw = argv[++i];
      if (raw === undefined || (raw.startsWith("--") && spec.kind !== "number" && spec.kind !== "int")) throw new BadInput(`--${name} needs a value`);
    }
    options[name] = convert(spec, raw);
  }
  // Someone asking for --help has not yet learnt what is required.
  if (!help) for (const s of specs) if (s.required && options[s.name] === undefined) throw new BadInput(`--${s.name} is required`);
  return { options, positional, help };
}

/** For commands that take options only: the first stray argument is refused. */
export function noPositional(positional: readonly string[]): void {
  if (positional.length) throw new BadInput(`unexpected argument ${JSON.stringify(positional[0])} (options start with --)`);
}

export function helpText(usage: string, specs: readonly OptionSpec[]): string {
  const rows = specs.map((s) => {
    const def = s.defaultText ?? (s.default === undefined ? "" : Array.isArray(s.default) ? s.default.join(",") : typeof s.default === "boolean" ? (s.default ? "on" : "off") : String(s.default));
    // A flag's default is always "not given", which says nothing.
    const note = s.required ? "required" : s.kind === "flag" || !def ? "" : `default: ${def}`;
    const left = `  --${s.name}${s.kind === "on-off" ? " on|off" : s.choices ? ` ${s.choices.join("|")}` : ""}`;
    return `${left.padEnd(40)} ${s.help}${note ? ` (${note})` : ""}`;
  });
  return `${usage}\n\nOptions:\n${rows.join("\n")}\n${"  --help".padEnd(40)} this text\n`;
}

/**
 * A command's options without positional arguments, or null when --help was
 * asked for: its text is then printed on stdout and the command exits 0.
 */
export function commandOptions(argv: string[], specs: readonly OptionSpec[], usage: string): ParsedOptions | null {
  const { options, positional, help } = parseArgs(argv, specs);
  if (help) {
    process.stdout.write(helpText(usage, specs));
    return null;
  }
  noPositional(positional);
  return options;
}
