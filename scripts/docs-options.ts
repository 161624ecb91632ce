// docs/options.md, made from the commands themselves: `npm run docs:options`
// (tsx scripts/docs-options.ts) writes it, and test/docs/options.test.ts makes it
// again in memory and fails while the page on disk differs, so an option added,
// renamed or reworded in the code fails the suite until the page is remade.
//
// Each section is a command's own --help (the built command's, from dist/) and
// a table made from the option table it parses with. The table is held to the
// --help: the help must be exactly what lib/args.ts helpText makes of its usage
// and that option table, or the page is not written (a command that parses with
// a table other than the one read here would otherwise be documented wrongly).
// The proxy's table (proxy/args.ts keeps its options to itself) and that of any
// command added later without one here are read from the --help's rows instead.
//
// Every --help is asked of one process, which runs each command's main(argv)
// from dist/cli/ as the `fencecheck` bin does (cli/commands.ts dispatch): thirty
// node processes would be most of the suite's docs tests. The top-level help
// comes from the bin itself.
import { execFile } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { helpText, type OptionSpec } from "../lib/index.ts";
import { SUBCOMMANDS } from "../cli/commands.ts";
import { TEST_OPTIONS } from "../runner/index.ts";
import { SOAK_OPTIONS } from "../cli/soak-options.ts";
import { CHECK_OPTIONS } from "../cli/check.ts";
import { SERVE_OPTIONS } from "../cli/serve.ts";
import { SETUP_OPTIONS } from "../cli/setup.ts";
import { COMMON as EXPERIMENT_COMMON } from "../cli/experiment.ts";
import { EXPERIMENTS } from "../experiments/index.ts";
import { SCENARIOS, FREE_OPTIONS } from "../scenarios/index.ts";

export const ROOT = fileURLToPath(new URL("..", import.meta.url));
export const OPTIONS_PAGE = "docs/options.md";

/** The option table each command parses with, where we can read it. */
const TABLES: Record<string, readonly OptionSpec[]> = {
  test: TEST_OPTIONS,
  soak: SOAK_OPTIONS,
  check: CHECK_OPTIONS,
  serve: SERVE_OPTIONS,
  setup: SETUP_OPTIONS,
};

/** A --help asked of a command: its arguments after `fencecheck`, and what it printed. */
export type HelpTexts = Map<string, string>;
const key = (argv: readonly string[]): string => argv.join(" ");

/** Every --help the page is made from. */
export function helpCommands(): string[][] {
  return [
    ...Object.keys(SUBCOMMANDS).map((name) => [name, "--help"]),
    ...Object.keys(EXPERIMENTS).map((name) => ["experiment", name, "--help"]),
    ...Object.keys(SCENARIOS).map((id) => ["scenario", id, "--help"]),
  ];
}

// Runs main(argv) of dist/cli/<command>.js for each argv, collecting what it writes on stdout.
const DRIVER = `
import { pathToFileURL } from "node:url";
const [root, runs] = JSON.parse(process.argv[1]);
const write = process.stdout.write.bind(process.stdout);
let text = "";
process.stdout.write = (chunk, ...rest) => { text += String(chunk); rest.find((r) => typeof r === "function")?.(); return true; };
const out = {};
for (const argv of runs) {
  text = "";
  const mod = await import(pathToFileURL(root + "/dist/cli/" + argv[0] + ".js").href);
  const code = await mod.main(argv.slice(1));
  if (code !== 0) throw new Error("fencecheck " + argv.join(" ") + " exited " + code);
  out[argv.join(" ")] = text;
}
write(JSON.stringify(out), () => process.exit(0));
`;

function node(args: string[]): Promise<string> {
  // Without npm's INIT_CWD, which would send the bin elsewhere (lib/user-dir.ts).
  const env = { ...process.env };
  delete env.INIT_CWD;
  return new Promise((resolve, reject) =>
    execFile(process.execPath, args, { cwd: ROOT, env, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) =>
      err ? reject(new Error(`node ${args.slice(0, 2).join(" ")}...: ${err.message}\n${stderr}`)) : resolve(stdout),
    ),
  );
}

/** What `fencecheck --help` and each command's --help print, from the built command (dist/, as `npm run build` left it). */
export async function collectHelp(): Promise<HelpTexts> {
  const [top, rest] = await Promise.all([
    node([join(ROOT, "dist", "cli", "fencecheck.js"), "--help"]),
    node(["--input-type=module", "-e", DRIVER, JSON.stringify([ROOT, helpCommands()])]),
  ]);
  return new Map<string, string>([["--help", top], ...Object.entries(JSON.parse(rest) as Record<string, string>)]);
}

/** The real bin's --help for one command, to hold the driver above to what a user sees. */
export function binHelp(argv: string[]): Promise<string> {
  return node([join(ROOT, "dist", "cli", "fencecheck.js"), ...argv]);
}

function helpOf(help: HelpTexts, argv: readonly string[]): string {
  const text = help.get(key(argv));
  if (text === undefined) throw new Error(`no --help collected for fencecheck ${key(argv)}`);
  return text;
}

/** A help's usage, the part helpText puts before its options. */
const usageOf = (text: string): string => text.split("\n\nOptions:\n")[0];

/** The option names a --help lists in its Options part (--help itself left out). */
export function helpOptionNames(text: string): string[] {
  const at = text.indexOf("\n\nOptions:\n");
  if (at < 0) return [];
  return [...text.slice(at).matchAll(/^ {2}--([\w-]+)/gm)].map((m) => m[1]).filter((n) => n !== "help");
}

/** A table row, whichever way it was read. */
interface Row {
  name: string;
  value: string;
  default: string;
  help: string;
}

/** The Default helpText shows: required, the default's text, or nothing (a flag, or no default). */
function defaultOf(s: OptionSpec): string {
  const def = s.defaultText ?? (s.default === undefined ? "" : Array.isArray(s.default) ? s.default.join(",") : typeof s.default === "boolean" ? (s.default ? "on" : "off") : String(s.default));
  return s.required ? "required" : s.kind === "flag" ? "" : def;
}

function valueOf(s: OptionSpec): string {
  const code = (xs: readonly string[]): string => xs.map((x) => `\`${x}\``).join(", ");
  const range = s.min !== undefined && s.max !== undefined ? `, ${s.min} to ${s.max}` : s.min !== undefined ? `, at least ${s.min}` : s.max !== undefined ? `, at most ${s.max}` : "";
  switch (s.kind) {
    case "flag":
      return "none (a flag)";
    case "on-off":
      return "`on` or `off`";
    case "int":
      return `integer${range}`;
    case "number":
      return `number${range}`;
    case "list":
      return s.choices ? `comma-separated, of ${code(s.choices)}` : "comma-separated list";
    case "string":
      return s.choices ? `one of ${code(s.choices)}` : "text";
  }
}

const rowsOfSpecs = (specs: readonly OptionSpec[]): Row[] => specs.map((s) => ({ name: s.name, value: valueOf(s), default: defaultOf(s), help: s.help }));

/** Rows read back from a --help made by helpText: `  --name[ a|b]` padded to 40 columns, the help, then (default: X) or (required). */
export function rowsOfHelp(text: string): Row[] {
  const at = text.indexOf("\n\nOptions:\n");
  if (at < 0) return [];
  const rows: Row[] = [];
  for (const line of text.slice(at + "\n\nOptions:\n".length).split("\n")) {
    if (!line.startsWith("  --")) continue;
    // The left column is padded to 40; a longer one (a long list of choices) is followed by one space.
    const padded = line.length > 41 && line[40] === " " && !line.slice(2, 40).trimEnd().includes("  ");
    const left = padded ? line.slice(0, 40).trim() : /^ {2}(--\S+(?: \S+)?)/.exec(line)![1];
    let help = padded ? line.slice(41) : line.slice(2 + left.length + 1);
    const [flag, choices] = left.split(" ");
    if (flag === "--help") continue;
    let def = "";
    const d = help.lastIndexOf(" (default: ");
    if (d >= 0 && help.endsWith(")")) {
      def = help.slice(d + " (default: ".length, -1);
      help = help.slice(0, d);
    } else if (help.endsWith(" (required)")) {
      def = "required";
      help = help.slice(0, -" (required)".length);
    }
    const value = choices === undefined ? "" : choices === "on|off" ? "`on` or `off`" : `one of ${choices.split("|").map((c) => `\`${c}\``).join(", ")}`;
    rows.push({ name: flag.slice(2), value, default: def, help });
  }
  return rows;
}

/** Text safe in a table cell and in prose: nothing in it taken for markup. */
function md(text: string): string {
  return text
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/([\\`*_[\]|])/g, "\\$1");
}

function table(rows: readonly Row[]): string {
  return [
    "| Option | Value | Default | What it sets |",
    "| --- | --- | --- | --- |",
    ...rows.map((r) => `| \`--${r.name}\` | ${r.value || " "} | ${md(r.default) || " "} | ${md(r.help)} |`),
  ].join("\n");
}

const block = (text: string): string => `\`\`\`text\n${text.trimEnd()}\n\`\`\``;

interface Section {
  level: 2 | 3;
  title: string;
  body: string;
}

/**
 * What is wrong between the --help texts and the tables the page makes of them:
 * empty when every table is exactly what its command's --help prints.
 */
export function helpDrift(help: HelpTexts): string[] {
  const drift: string[] = [];
  const against = (argv: string[], specs: readonly OptionSpec[]): void => {
    const text = helpOf(help, argv);
    const made = helpText(usageOf(text), specs);
    // console.log (experiment) ends with a newline more than helpText's.
    if (text.trimEnd() === made.trimEnd()) return;
    const a = text.split("\n");
    const b = made.split("\n");
    const i = a.findIndex((line, j) => line !== b[j]);
    const printed = helpOptionNames(text);
    const tabled = specs.map((s) => s.name);
    const missing = printed.filter((n) => !tabled.includes(n));
    const extra = tabled.filter((n) => !printed.includes(n));
    drift.push(
      `fencecheck ${key(argv)} does not print the option table the page is made from` +
        (missing.length ? `; it prints ${missing.map((n) => `--${n}`).join(", ")}, which the table lacks` : "") +
        (extra.length ? `; the table has ${extra.map((n) => `--${n}`).join(", ")}, which it does not print` : "") +
        `; first difference, line ${i + 1}:\n  --help: ${JSON.stringify(a[i] ?? "(end)")}\n  table:  ${JSON.stringify(b[i] ?? "(end)")}`,
    );
  };
  for (const [name, specs] of Object.entries(TABLES)) against([name, "--help"], specs);
  for (const e of Object.values(EXPERIMENTS)) against(["experiment", e.name, "--help"], [...e.options, ...EXPERIMENT_COMMON]);
  // A scenario's --help lists the options it takes: the free ones and its own, each one of test's.
  for (const s of Object.values(SCENARIOS)) {
    const text = helpOf(help, ["scenario", s.id, "--help"]);
    const listed = [...text.slice(text.indexOf("\nOptions it takes")).matchAll(/^ {2}--([\w-]+)/gm)].map((m) => m[1]).sort();
    const ours = [...new Set([...Object.keys(s.varies), ...Object.keys(FREE_OPTIONS)])].sort();
    if (listed.join() !== ours.join()) drift.push(`fencecheck scenario ${s.id} --help lists ${listed.map((n) => `--${n}`).join(", ")}; the page's tables have ${ours.map((n) => `--${n}`).join(", ")}`);
    for (const n of ours) if (!TEST_OPTIONS.some((t) => t.name === n)) drift.push(`scenario ${s.id} takes --${n}, which fencecheck test has not`);
  }
  return drift;
}

function sections(help: HelpTexts): Section[] {
  const out: Section[] = [{ level: 2, title: "fencecheck", body: block(helpOf(help, ["--help"])) }];
  for (const name of Object.keys(SUBCOMMANDS)) {
    const text = helpOf(help, [name, "--help"]);
    const title = `fencecheck ${name}`;
    if (TABLES[name]) {
      out.push({ level: 2, title, body: `${block(usageOf(text))}\n\n${table(rowsOfSpecs(TABLES[name]))}` });
    } else if (name === "experiment") {
      out.push({ level: 2, title, body: `${block(text)}\n\nEach experiment's options follow; every experiment also takes \`--quick\` and \`--store\`.` });
      for (const e of Object.values(EXPERIMENTS)) {
        const own = helpOf(help, ["experiment", e.name, "--help"]);
        out.push({ level: 3, title: `fencecheck experiment ${e.name}`, body: `${block(usageOf(own))}\n\n${table(rowsOfSpecs([...e.options, ...EXPERIMENT_COMMON]))}` });
      }
    } else if (name === "scenario") {
      const free = Object.entries(FREE_OPTIONS).map(([n, why]) => `| \`--${n}\` | ${md(why)} |`);
      const varies = Object.values(SCENARIOS).flatMap((s) => Object.entries(s.varies).map(([n, why]) => `| ${s.id} | \`--${n}\` | ${md(why)} |`));
      out.push({
        level: 2,
        title,
        body: [
          block(text),
          "A scenario takes a few options of [`fencecheck test`](#fencecheck-test), with the values they take there; every other option is fixed by the scenario (`fencecheck scenario <id> --help` lists what it takes). Every scenario takes these:",
          ["| Option | What it sets |", "| --- | --- |", ...free].join("\n"),
          "and each its own, the ones it varies:",
          ["| Scenario | Option | What setting it shows |", "| --- | --- | --- |", ...varies].join("\n"),
        ].join("\n\n"),
      });
    } else {
      // reap takes no options; a command added later without a table here: its --help's rows.
      const rows = rowsOfHelp(text);
      out.push({ level: 2, title, body: rows.length ? `${block(usageOf(text))}\n\n${table(rows)}` : block(text) });
    }
  }
  return out;
}

/** docs/options.md as the commands make it now. */
export function renderOptionsPage(help: HelpTexts): string {
  const all = sections(help);
  const slug = (title: string): string => title.toLowerCase().replace(/ /g, "-");
  return [
    "# Options of every command",
    "",
    "<!-- Generated by `npm run docs:options` (scripts/docs-options.ts) from each command's --help. Do not edit by hand: change the command, then run npm run docs:options. -->",
    "",
    "> **Generated; do not edit by hand.** `npm run docs:options` writes this page",
    "> from each command's own `--help` and the option table it parses with, and",
    "> fencecheck's test suite fails while the page differs from what the commands",
    "> say. To change it, change the command and run `npm run docs:options`.",
    "",
    "Every `fencecheck` command and its options, as `fencecheck <command> --help`",
    "prints them. An option is given as `--name value` or `--name=value`; a flag",
    "takes no value. In fencecheck's own checkout the npm scripts take the same",
    "options after `--` (`npm run test:jepsen -- --backend etcd` for",
    "`fencecheck test --backend etcd`).",
    "",
    ...all.map((s) => `${s.level === 3 ? "  " : ""}- [${s.title}](#${slug(s.title)})`),
    "",
    ...all.flatMap((s) => [`${"#".repeat(s.level)} ${s.title}`, "", s.body, ""]),
  ].join("\n");
}

/** The page and what keeps it from being written (empty: nothing). */
export async function optionsPage(): Promise<{ page: string; drift: string[] }> {
  const help = await collectHelp();
  return { page: renderOptionsPage(help), drift: helpDrift(help) };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { page, drift } = await optionsPage();
  if (drift.length) {
    process.stderr.write(`docs-options: not written; the tables differ from the commands' --help:\n${drift.join("\n")}\n`);
    process.exit(1);
  }
  writeFileSync(join(ROOT, OPTIONS_PAGE), page);
  process.stdout.write(`docs-options: wrote ${OPTIONS_PAGE}\n`);
}
