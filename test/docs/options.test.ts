// docs/options.md is generated from the commands (scripts/docs-options.ts, `npm
// run docs:options`): this makes it again in memory and fails while the page on
// disk differs, so an option added, renamed or reworded without the page being
// made again fails the suite. It also holds the page to the commands' --help on
// its own terms: every option a --help prints has its row in the page.
import { describe, it, expect, beforeAll } from "vitest";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { REPO } from "../helpers.ts";
import { OPTIONS_PAGE, binHelp, collectHelp, helpDrift, helpOptionNames, renderOptionsPage, type HelpTexts } from "../../scripts/docs-options.ts";

/** The page's sections by heading ("fencecheck test"), each its lines. */
function sections(page: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  let current: string[] = [];
  for (const line of page.split("\n")) {
    const h = /^#{2,3} (.*)$/.exec(line);
    if (h) out.set(h[1], (current = []));
    else current.push(line);
  }
  return out;
}

describe(OPTIONS_PAGE, { timeout: 60_000 }, () => {
  let help: HelpTexts;
  beforeAll(async () => {
    help = await collectHelp();
  }, 60_000);

  it("is what `npm run docs:options` makes of the commands now", () => {
    const file = join(REPO, OPTIONS_PAGE);
    expect(existsSync(file), `${OPTIONS_PAGE} is missing: npm run docs:options writes it`).toBe(true);
    const onDisk = readFileSync(file, "utf8").split("\n");
    const made = renderOptionsPage(help).split("\n");
    const i = made.findIndex((line, j) => line !== onDisk[j]);
    const at = i >= 0 ? i : made.length < onDisk.length ? made.length : -1;
    expect(
      at,
      at < 0
        ? ""
        : `${OPTIONS_PAGE}:${at + 1} differs from what the commands say (run npm run docs:options; do not edit the page by hand):\n` +
            `  on disk: ${JSON.stringify(onDisk[at] ?? "(end of file)")}\n  made:    ${JSON.stringify(made[at] ?? "(end of file)")}`,
    ).toBe(-1);
  });

  it("is made from the option tables the commands print their --help from", () => {
    const drift = helpDrift(help);
    expect(drift, drift.join("\n")).toEqual([]);
  });

  it("has a row for every option each command's --help prints, in that command's section", () => {
    const page = sections(renderOptionsPage(help));
    const missing: string[] = [];
    for (const [args, text] of help) {
      const argv = args.split(" ").filter((a) => a !== "--help");
      // A scenario's options are in the scenario section, in the free table or in its own rows.
      const scenario = argv[0] === "scenario" && argv.length === 2 ? argv[1] : null;
      const title = scenario ? "fencecheck scenario" : ["fencecheck", ...argv].join(" ");
      const lines = page.get(title);
      if (!lines) {
        missing.push(`no section "${title}" for fencecheck ${args}`);
        continue;
      }
      const names = scenario ? [...text.slice(text.indexOf("\nOptions it takes")).matchAll(/^ {2}--([\w-]+)/gm)].map((m) => m[1]) : helpOptionNames(text);
      for (const name of names) {
        const row = scenario
          ? lines.some((l) => l.startsWith(`| \`--${name}\` |`) || l.startsWith(`| ${scenario} | \`--${name}\` |`))
          : lines.some((l) => l.startsWith(`| \`--${name}\` |`));
        if (!row) missing.push(`fencecheck ${args} prints --${name}; section "${title}" has no row for it`);
      }
    }
    expect(missing, missing.join("\n")).toEqual([]);
  });

  it("(the check itself) calls a --help that prints an option its table lacks drift, naming it", () => {
    const changed = new Map(help);
    changed.set("serve --help", help.get("serve --help")!.replace(/^ {2}--help/m, `${"  --bind".padEnd(40)} an option the table lacks\n  --help`));
    expect(helpDrift(changed).join("\n")).toMatch(/fencecheck serve --help .*it prints --bind, which the table lacks/);
  });

  it("reads each --help as the fencecheck bin prints it", async () => {
    // The page's --help texts come from one process running each command's main (see
    // scripts/docs-options.ts); here two of them are asked of the bin itself: one
    // command that writes its help with process.stdout.write, one with console.log.
    for (const argv of [["test", "--help"], ["experiment", "renew", "--help"]]) expect(await binHelp(argv), argv.join(" ")).toBe(help.get(argv.join(" ")));
  });
});
