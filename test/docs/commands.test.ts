// Every command a page shows in a code block is one the command would take: a
// real subcommand, real options, values its parser accepts. Readers copy these
// lines, and an option renamed in the code leaves the page wrong with nothing to
// say so. Each line goes through the command's own parser (the option tables
// the commands parse with), and nothing runs.
//
// Which lines are commands (the convention the pages follow):
//   - lines of code blocks (fenced, or indented four columns) that start, after
//     an optional `$ ` prompt and VAR=value assignments, with `fencecheck`,
//     `npx fencecheck`, `node_modules/.bin/fencecheck`, `node
//     dist/cli/fencecheck.js` or `npm run <script>`;
//   - in a group of lines (a block's lines between blank lines) where any
//     line starts with `$ `, only those lines: the rest is what they printed;
//   - not a fenced block whose info string names something other than a shell
//     (```text, ```json, ```yaml, ...): its lines are output or data;
//   - not the tool's own messages, `fencecheck: ...`, `fencecheck <command>:
//     ...`, `fencecheck <command> failed: ...` (printed output quoted in a block);
//   - not a line elided with `...`: it is not meant to be run as it stands.
// Placeholders stand for what the reader fills in: a value or argument written
// as <something> or in capitals (DIR, RUN, N, FILE) is taken as a valid one.
import { describe, it, expect } from "vitest";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { REPO } from "../helpers.ts";
import { docPages, readPage, scanPage, type CodeBlock } from "./markdown.ts";
import { SUBCOMMANDS } from "../../cli/commands.ts";
import { TEST_OPTIONS } from "../../runner/index.ts";
import { SOAK_OPTIONS, parseSoakArgs } from "../../cli/soak-options.ts";
import { CHECK_OPTIONS } from "../../cli/check.ts";
import { SERVE_OPTIONS } from "../../cli/serve.ts";
import { SETUP_OPTIONS } from "../../cli/setup.ts";
import { COMMON as EXPERIMENT_COMMON } from "../../cli/experiment.ts";
import { EXPERIMENTS } from "../../experiments/index.ts";
import { SCENARIOS, FREE_OPTIONS, buildScenario } from "../../scenarios/index.ts";
import { givenOptions } from "../../scenarios/build.ts";
import { isAdapterPath } from "../../clients/index.ts";
import { parseProxyArgs } from "../../proxy/index.ts";
import { BadInput, noPositional, parseArgs, type OptionSpec } from "../../lib/index.ts";

const SCRIPTS = (JSON.parse(readFileSync(join(REPO, "package.json"), "utf8")) as { scripts: Record<string, string> }).scripts;

/** A command line found on a page: where, as written, and its words after the shell's splitting. */
interface CommandLine {
  page: string;
  n: number;
  text: string;
  words: string[];
}

/**
 * The words of a shell command line: quotes and backslashes as the shell takes
 * them; it stops at a comment, a pipe, `&&`, `;`, `&` or a redirection, since
 * what follows is another command or a file. `<word ...>` is one placeholder word.
 * `elided` says an unquoted `...` (or `…`) stood in for the rest.
 */
function shellWords(line: string): { words: string[]; elided: boolean } {
  const words: string[] = [];
  let word: string | null = null;
  let elided = false;
  const end = (): void => {
    if (word !== null) words.push(word);
    word = null;
  };
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (c === " " || c === "\t") {
      end();
      continue;
    }
    if (c === "#" && word === null) break;
    if (c === "|" || c === ";" || c === "&") break;
    if (c === ">" || (c === "<" && !(word === null && /^<[^<>]+>/.test(line.slice(i))))) {
      // `2>&1`, `2>/dev/null`: the digits were the redirection's, not an argument.
      if (word !== null && /^\d+$/.test(word)) word = null;
      break;
    }
    if (c === "<") {
      const close = line.indexOf(">", i);
      word = line.slice(i, close + 1);
      i = close;
      continue;
    }
    if (c === "'") {
      const close = line.indexOf("'", i + 1);
      word = (word ?? "") + line.slice(i + 1, close < 0 ? undefined : close);
      i = close < 0 ? line.length : close;
      continue;
    }
    if (c === '"') {
      let j = i + 1;
      let s = "";
      for (; j < line.length && line[j] !== '"'; j++) {
        if (line[j] === "\\" && j + 1 < line.length && '"\\$`'.includes(line[j + 1])) s += line[++j];
        else s += line[j];
      }
      word = (word ?? "") + s;
      i = j;
      continue;
    }
    if (c === "\\" && i + 1 < line.length) {
      word = (word ?? "") + line[++i];
      continue;
    }
    word = (word ?? "") + c;
    if (word.includes("...") || word.includes("…")) elided = true;
  }
  end();
  return { words, elided };
}

/** A fenced block of one of these languages (or none) holds commands; any other (text, json, ...) does not. */
const SHELL_INFO = new Set(["", "sh", "bash", "shell", "zsh", "console", "shell-session", "sh-session", "shellsession"]);

/** The command lines of a page's code blocks, by the convention at the top of this file. */
function commandLines(page: string, blocks: CodeBlock[]): CommandLine[] {
  const found: CommandLine[] = [];
  for (const block of blocks) {
    if (block.fenced && !SHELL_INFO.has(block.info)) continue;
    // Lines ending in \ go on in the next one.
    const joined: Array<{ n: number; text: string }> = [];
    for (let i = 0; i < block.lines.length; i++) {
      const first = block.lines[i];
      let text = first.text.trim();
      while (text.endsWith("\\") && i + 1 < block.lines.length) text = `${text.slice(0, -1)} ${block.lines[++i].text.trim()}`;
      joined.push({ n: first.n, text });
    }
    // Groups of lines between blank lines: a group with a `$ ` line is commands and their output.
    const groups: Array<typeof joined> = [[]];
    for (const l of joined) {
      if (l.text === "") groups.push([]);
      else groups[groups.length - 1].push(l);
    }
    for (const group of groups) {
      const prompted = group.some((l) => l.text.startsWith("$ "));
      for (const l of group) {
        if (prompted && !l.text.startsWith("$ ")) continue;
        const text = l.text.replace(/^\$ /, "");
        const { words, elided } = shellWords(text);
        while (words.length && /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[0])) words.shift();
        // The tool's own messages, quoted as output: "fencecheck: ...", "fencecheck test: ...", "fencecheck test failed: ...".
        if (words[0] === "fencecheck:" || (words[0] === "fencecheck" && (/:$/.test(words[1] ?? "") || words[2] === "failed:"))) continue;
        const command = commandWords(words);
        if (!command || elided) continue;
        found.push({ page, n: l.n, text, words: command });
      }
    }
  }
  return found;
}

/** `fencecheck`'s arguments for a line that runs it (`npm run <script>` as `npm:<script>` and its arguments), or null for any other line. */
function commandWords(words: string[]): string[] | null {
  if (words[0] === "fencecheck" || words[0] === "node_modules/.bin/fencecheck" || words[0] === "./node_modules/.bin/fencecheck") return words.slice(1);
  if (words[0] === "npx" && words[1] === "fencecheck") return words.slice(2);
  if (words[0] === "node" && (words[1] === "dist/cli/fencecheck.js" || words[1] === "./dist/cli/fencecheck.js")) return words.slice(2);
  if (words[0] === "npm" && (words[1] === "run" || words[1] === "run-script")) return [`npm:${words[2] ?? ""}`, ...words.slice(3)];
  return null;
}

/** <something>, or a word in capitals (DIR, RUN, N): what the reader fills in. */
const isPlaceholder = (w: string): boolean => /^<[^<>]+>$/.test(w) || /^[A-Z]+(?:[_-][A-Z]+)*$/.test(w);

/** `args` with each placeholder value replaced by one the option takes, and `[options]`-style words left out. */
function filled(args: string[], specs: readonly OptionSpec[]): string[] {
  const byName = new Map(specs.map((s) => [s.name, s]));
  const out: string[] = [];
  const sample = (spec: OptionSpec): string => {
    if (spec.choices?.length) return spec.choices[0];
    if (spec.kind === "on-off") return "on";
    if (spec.kind === "int" || spec.kind === "number") {
      if (typeof spec.default === "number") return String(spec.default);
      return String(Math.min(spec.max ?? Infinity, Math.max(spec.min ?? 1, 1024)));
    }
    return "placeholder";
  };
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (/^\[.*\]$/.test(a)) continue;
    const eq = a.indexOf("=");
    if (a.startsWith("--") && eq > 0) {
      const spec = byName.get(a.slice(2, eq));
      out.push(spec && isPlaceholder(a.slice(eq + 1)) ? `${a.slice(0, eq)}=${sample(spec)}` : a);
      continue;
    }
    out.push(a);
    const spec = a.startsWith("--") ? byName.get(a.slice(2)) : undefined;
    if (spec && spec.kind !== "flag" && i + 1 < args.length) {
      i++;
      out.push(isPlaceholder(args[i]) ? sample(spec) : args[i]);
    }
  }
  return out;
}

/** `args` parsed against `specs` as a command that takes no positional arguments. */
function optionsOnly(args: string[], specs: readonly OptionSpec[]): void {
  const { positional } = parseArgs(filled(args, specs), specs);
  noPositional(positional);
}

const helpAsked = (args: string[]): boolean => args.includes("--help") || args.includes("-h");

/** Throws the command's own BadInput (or ours, in its words) when `words` is not a command fencecheck takes. */
function checkCommand(words: string[]): void {
  const [first, ...rest] = words;
  if (first === undefined) throw new BadInput("no command (fencecheck --help lists them)");
  if (first.startsWith("npm:")) {
    const script = first.slice(4);
    // `npm run` alone lists the scripts.
    if (script === "") return;
    const body = SCRIPTS[script];
    if (body === undefined) throw new BadInput(`package.json has no script ${JSON.stringify(script)}`);
    const dash = rest.indexOf("--");
    const before = dash < 0 ? rest : rest.slice(0, dash);
    // npm takes options before `--` as its own.
    const stray = before.find((a) => a.startsWith("-"));
    if (stray) throw new BadInput(`${stray} before \`--\` goes to npm, not to the script (npm run ${script} -- ${stray} ...)`);
    const m = /^node dist\/cli\/fencecheck\.js(?:\s+(.*))?$/.exec(body);
    // A script that is not fencecheck's command (build, bench:checker, ...): that it exists is all we can say.
    if (!m) return;
    return checkCommand([...(m[1] ? m[1].split(/\s+/) : []), ...before, ...(dash < 0 ? [] : rest.slice(dash + 1))]);
  }
  if (first === "--version" || first === "-v" || first === "version") {
    if (rest.length) throw new BadInput(`--version takes nothing after it, got ${rest.join(" ")}`);
    return;
  }
  if (first === "--help" || first === "-h" || first === "help") {
    if (first === "help" && rest.length && !SUBCOMMANDS[rest[0]] && !isPlaceholder(rest[0])) throw new BadInput(`unknown command ${JSON.stringify(rest[0])}`);
    return;
  }
  if (isPlaceholder(first)) {
    if (!helpAsked(rest)) throw new BadInput(`${first} stands for a command, which only --help may follow`);
    return;
  }
  if (!SUBCOMMANDS[first]) throw new BadInput(`unknown command ${JSON.stringify(first)} (commands: ${Object.keys(SUBCOMMANDS).join(", ")})`);
  switch (first) {
    case "test":
      return optionsOnly(rest, TEST_OPTIONS);
    case "soak": {
      const args = filled(rest, SOAK_OPTIONS);
      // A shipped preset is a file of the checkout, so the whole request can be made: --only's names, each configuration through test's parser.
      // --matrix and --compare name the reader's files: the options alone, then.
      const files = args.some((a) => /^--(matrix|compare)(=|$)/.test(a));
      if (!files && !helpAsked(args)) parseSoakArgs(args);
      else optionsOnly(args, SOAK_OPTIONS);
      return;
    }
    case "check": {
      const { positional, help } = parseArgs(filled(rest, CHECK_OPTIONS), CHECK_OPTIONS);
      if (!help && positional.length !== 1) throw new BadInput(`expected one run directory, got ${positional.length ? positional.map((a) => JSON.stringify(a)).join(" ") : "none"}`);
      return;
    }
    case "serve":
      return optionsOnly(rest, SERVE_OPTIONS);
    case "setup":
      return optionsOnly(rest, SETUP_OPTIONS);
    case "proxy":
      // Its option table is its own (proxy/args.ts): a placeholder there is a port or an address, and 1024 is taken as either.
      parseProxyArgs(
        rest.filter((a) => !/^\[.*\]$/.test(a)).map((a) => (isPlaceholder(a) ? "1024" : a)),
        { command: "fencecheck proxy", port: 18474 },
      );
      return;
    case "reap":
      if (rest.length && !helpAsked(rest)) throw new BadInput(`fencecheck reap takes no arguments, got ${rest.join(" ")}`);
      return;
    case "experiment": {
      const [name, ...options] = rest;
      if (name === undefined) throw new BadInput("no experiment named (fencecheck experiment --list)");
      if (name === "--list") {
        if (options.length) throw new BadInput(`--list takes nothing after it, got ${options.join(" ")}`);
        return;
      }
      if (name === "--help" || name === "-h") return;
      // <name>: any experiment's options will do.
      const specs = isPlaceholder(name) ? [...Object.values(EXPERIMENTS).flatMap((e) => e.options), ...EXPERIMENT_COMMON] : EXPERIMENTS[name] ? [...EXPERIMENTS[name].options, ...EXPERIMENT_COMMON] : null;
      if (!specs) throw new BadInput(`no experiment named ${JSON.stringify(name)} (experiments: ${Object.keys(EXPERIMENTS).join(", ")})`);
      const unique = [...new Map(specs.map((s) => [s.name, s])).values()];
      return optionsOnly(options, unique);
    }
    case "scenario": {
      const [id, ...options] = rest;
      if (id === undefined) throw new BadInput("no scenario id (fencecheck scenario --list)");
      if ((id === "--list" && options.length === 0) || id === "--help" || id === "-h") return;
      if (isPlaceholder(id)) {
        // <id>: options some scenario takes.
        const allowed = new Set([...Object.keys(FREE_OPTIONS), ...Object.values(SCENARIOS).flatMap((s) => Object.keys(s.varies))]);
        const given = givenOptions(filled(options, TEST_OPTIONS));
        const fixed = Object.keys(given).filter((o) => !allowed.has(o));
        if (fixed.length) throw new BadInput(`--${fixed[0]} is taken by no scenario`);
        return;
      }
      const scenario = SCENARIOS[id.toUpperCase()];
      if (!scenario) throw new BadInput(`unknown scenario ${JSON.stringify(id)} (scenarios: ${Object.keys(SCENARIOS).join(", ")})`);
      if (options.length === 1 && helpAsked(options)) return;
      // As the command does: the options it refuses (fixed by the scenario) and the test it would build from them.
      // A reader's own adapter (`--client ./my-lock.ts`) is a file of theirs: the example adapter stands in for it.
      const own = (a: string, i: number, all: string[]) => (i > 0 && all[i - 1] === "--client" && isAdapterPath(a) ? join(REPO, "examples", "redis-lock-adapter.ts") : a);
      buildScenario(scenario, filled(options.map(own), TEST_OPTIONS));
      return;
    }
  }
}

describe("the docs' command lines", () => {
  const pages = docPages();
  const lines = pages.flatMap((page) => commandLines(page, scanPage(readPage(page)).blocks));

  it("are found (README.md has some)", () => {
    expect(lines.filter((l) => l.page === "README.md").length).toBeGreaterThan(0);
  });

  it.each(pages)("%s: every fencecheck command in a code block is one its parser takes", (page) => {
    const bad: string[] = [];
    for (const line of lines.filter((l) => l.page === page)) {
      try {
        checkCommand(line.words);
      } catch (err) {
        if (!(err instanceof BadInput || (err instanceof Error && err.name === "BadInput"))) throw err;
        bad.push(`${page}:${line.n}: ${line.text}\n    ${err.message}`);
      }
    }
    expect(bad, bad.join("\n")).toEqual([]);
  });
});

// The checker itself, so that a pass above means the pages are right and not that nothing was looked at.
describe("the command-line checker itself", () => {
  const refusal = (line: string): string | null => {
    const words = commandWords(shellWords(line).words);
    try {
      checkCommand(words!);
      return null;
    } catch (err) {
      return (err as Error).message;
    }
  };

  it("splits a line as a shell does", () => {
    expect(shellWords(`npx fencecheck check "my run" --out 'a b' # why`).words).toEqual(["npx", "fencecheck", "check", "my run", "--out", "a b"]);
    expect(shellWords("fencecheck test --seed 1 2>&1 | tee log").words).toEqual(["fencecheck", "test", "--seed", "1"]);
    expect(shellWords("fencecheck check <run directory> && echo ok").words).toEqual(["fencecheck", "check", "<run directory>"]);
    expect(shellWords("fencecheck test --backend redis ...").elided).toBe(true);
  });

  it("takes the pages' kinds of lines, placeholders included", () => {
    for (const ok of [
      "npx fencecheck test --client ./my-lock.ts --nemesis pause --fence off",
      "npm run test:jepsen -- --backend redis --seed N",
      "npm run soak -- --preset nightly --only redis-pause-fenced --test-count 3",
      "fencecheck soak --matrix ./locks.json --compare DIR",
      "fencecheck check <run directory> --out audit",
      "npm run scenario -- K4 --redis-persistence always --restart-delay 3500",
      "npm run experiment -- renew --quick --ttl 500",
      "npm run bench:fairness -- --quick",
      "npm run bench:checker",
      "fencecheck experiment <name> --help",
      "fencecheck setup --backends LIST",
      "fencecheck proxy --port 18474 --toxics toxiproxy",
      "fencecheck proxy --port N --host ADDR",
      "fencecheck reap",
      "fencecheck --version",
    ])
      expect(refusal(ok), ok).toBeNull();
  });

  it("refuses what the commands refuse, in their words", () => {
    expect(refusal("npx fencecheck test --nemsis pause")).toMatch(/unknown option --nemsis; did you mean --nemesis\?/);
    expect(refusal("fencecheck tset")).toMatch(/unknown command "tset"/);
    expect(refusal("npm run soak -- --preset nightly --only no-such-configuration")).toMatch(/no-such-configuration/);
    expect(refusal("npm run soak --preset smoke")).toMatch(/--preset before `--` goes to npm/);
    expect(refusal("npm run no-such-script")).toMatch(/no script "no-such-script"/);
    expect(refusal("fencecheck check")).toMatch(/expected one run directory/);
    expect(refusal("npm run scenario -- K3 --nemesis kill")).toMatch(/--nemesis is fixed by scenario K3/);
    expect(refusal("npm run scenario -- Q9")).toMatch(/unknown scenario "Q9"/);
    expect(refusal("npm run experiment -- renew --ttl soon")).toMatch(/--ttl must be an integer/);
    expect(refusal("fencecheck experiment nope")).toMatch(/no experiment named "nope"/);
    expect(refusal("fencecheck serve --port 70000")).toMatch(/--port must be at most 65535/);
    expect(refusal("fencecheck reap --all")).toMatch(/takes no arguments/);
    expect(refusal("fencecheck test --version")).toMatch(/unknown option --version/);
  });

  it("reads only the commands of a block: not its output, not the tool's messages, not a text block", () => {
    const page = [
      "    $ npx fencecheck test --seed 1",
      "    fencecheck soak --no-such-option is output here",
      "",
      "    npx fencecheck serve --port 0",
      "",
      "Prose.",
      "",
      "    fencecheck test: fencecheck needs the Debian packages etcd-server",
      "    npx fencecheck check run1 \\",
      "      --out audit",
      "",
      "```text",
      "fencecheck test --not-a-command",
      "```",
    ].join("\n");
    const found = commandLines("x.md", scanPage(page).blocks).map((l) => `${l.n} ${l.words.join(" ")}`);
    expect(found).toEqual(["1 test --seed 1", "4 serve --port 0", "9 check run1 --out audit"]);
  });
});
