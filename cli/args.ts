// A small option parser driven by a table, so --help, defaults and the messages
// for bad values all come from one description of each option.
import { BadInput } from "../lib/index.ts";

export type OptionKind = "int" | "number" | "string" | "on-off" | "list";

export interface OptionSpec {
  name: string;
  kind: OptionKind;
  default: string | number | boolean | string[] | undefined;
  help: string;
  min?: number;
  max?: number;
  choices?: readonly string[];
  /** Shown instead of the default value in --help. */
  defaultText?: string;
}

export type ParsedOptions = Record<string, string | number | boolean | string[] | undefined>;

function convert(spec: OptionSpec, raw: string): string | number | boolean | string[] {
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
        if (spec.choices && !spec.choices.includes(item))
          throw new BadInput(`${where}: unknown value ${JSON.stringify(item)}; choose from ${spec.choices.join(", ")}`);
      return items;
    }
    case "string":
      if (spec.choices && !spec.choices.includes(raw))
        throw new BadInput(`${where}: unknown value ${JSON.stringify(raw)}; choose from ${spec.choices.join(", ")}`);
      return raw;
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
    if (!spec) throw new BadInput(`unknown option --${name} (see --help)`);
    let raw: string | undefined = eq < 0 ? undefined : arg.slice(eq + 1);
    if (raw === undefined) {
      raw = argv[++i];
      if (raw === undefined || (raw.startsWith("--") && spec.kind !== "number" && spec.kind !== "int")) throw new BadInput(`--${name} needs a value`);
    }
    options[name] = convert(spec, raw);
  }
  return { options, positional, help };
}

export function helpText(usage: string, specs: readonly OptionSpec[]): string {
  const rows = specs.map((s) => {
    const def = s.defaultText ?? (s.default === undefined ? "" : Array.isArray(s.default) ? s.default.join(",") : typeof s.default === "boolean" ? (s.default ? "on" : "off") : String(s.default));
    const left = `  --${s.name}${s.kind === "on-off" ? " on|off" : s.choices ? ` ${s.choices.join("|")}` : ""}`;
    return `${left.padEnd(40)} ${s.help}${def ? ` (default: ${def})` : ""}`;
  });
  return `${usage}\n\nOptions:\n${rows.join("\n")}\n  --help${" ".repeat(34)} this text\n`;
}
