// Every relative link of README.md and docs/ lands: on a file of the checkout,
// and where it names a #fragment, on a heading of that page as GitHub anchors
// it. A page moved or a heading reworded breaks links silently otherwise, and
// the docs are rewritten page by page by several hands. Links to the web are
// not followed (the suite runs offline). The pages must also never point a
// reader at a file outside the checkout, in a link or in prose or code: a
// reader of the package or of GitHub has nothing beyond it.
import { describe, it, expect } from "vitest";
import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname, extname, join, relative, resolve } from "node:path";
import { REPO } from "../helpers.ts";
import { docPages, pageLinks, readPage, scanPage, Slugger, headingPlainText, type ScannedPage } from "./markdown.ts";

const scanned = new Map<string, ScannedPage>();
function scan(page: string): ScannedPage {
  if (!scanned.has(page)) scanned.set(page, scanPage(readFileSync(join(REPO, page), "utf8")));
  return scanned.get(page)!;
}

/** What is wrong with `target` on `page`, or null when it lands. */
function brokenLink(page: string, target: string): string | null {
  // The web, mail, and any other scheme: not ours to check.
  if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith("//")) return null;
  const hash = target.indexOf("#");
  const pathPart = hash < 0 ? target : target.slice(0, hash);
  const fragment = hash < 0 ? null : target.slice(hash + 1);
  let path: string;
  try {
    path = decodeURIComponent(pathPart.replace(/\?.*$/, ""));
  } catch {
    return `${target}: not a valid URL`;
  }
  // On GitHub a link starting with / is from the repository's root.
  const file = path === "" ? join(REPO, page) : path.startsWith("/") ? join(REPO, path) : resolve(REPO, dirname(page), path);
  const shown = relative(REPO, file) || ".";
  if (relative(REPO, file).startsWith("..")) return `${target}: leaves the repository (${shown})`;
  if (!existsSync(file)) return `${target}: no such file ${shown}`;
  if (fragment === null || fragment === "") return null;
  if (statSync(file).isDirectory()) return `${target}: a #fragment on a directory`;
  const ext = extname(file).toLowerCase();
  if (ext === ".md") {
    const anchors = scan(relative(REPO, file)).anchors;
    let wanted: string;
    try {
      wanted = decodeURIComponent(fragment);
    } catch {
      return `${target}: #${fragment} is not a valid fragment`;
    }
    if (anchors.has(wanted)) return null;
    const near = [...anchors].filter((a) => a.includes(wanted) || wanted.includes(a)).slice(0, 3);
    return `${target}: ${shown} has no heading #${wanted}${near.length ? ` (its headings include ${near.map((a) => `#${a}`).join(", ")})` : ""}`;
  }
  // GitHub's line anchors in a file it shows as code: #L10, #L10-L20.
  if (/^L\d+(?:-L\d+)?$/.test(fragment)) return null;
  return `${target}: #${fragment} names nothing in ${shown} (a file that is not markdown takes only #L<line>)`;
}

/** Each path of a line that climbs out of the page's directory with ../ (not the ".../" of an elided path). */
const CLIMBING = /(?<![\w./])(?:\.\.\/)+[\w.@-]+(?:\/[\w.@-]+)*/g;

/** The paths `line` of `page` names with ../ that are not files of the checkout (outside it, or nowhere in it). */
export function outsideCheckout(page: string, line: string): string[] {
  // A sentence's full stop is not part of the path.
  return [...line.matchAll(CLIMBING)].map((m) => m[0].replace(/\.+$/, "")).filter((p) => {
    const at = resolve(REPO, dirname(page), p);
    return relative(REPO, at).startsWith("..") || !existsSync(at);
  });
}

describe("the docs' links", () => {
  const pages = docPages();

  it("the pages are found (README.md and docs/)", () => {
    expect(pages).toContain("README.md");
    expect(pages.some((p) => p.startsWith("docs/"))).toBe(true);
  });

  it.each(pages)("%s: every relative link lands on a file, and its #fragment on a heading", (page) => {
    const broken: string[] = [];
    for (const link of pageLinks(scan(page))) {
      const why = brokenLink(page, link.target);
      if (why) broken.push(`${page}:${link.n}: ${why}`);
    }
    expect(broken, broken.join("\n")).toEqual([]);
  });

  it.each(pages)("%s: names no file outside the checkout", (page) => {
    // In code blocks too: a reader copies those.
    const found = readPage(page)
      .split(/\r?\n/)
      .flatMap((line, i) => outsideCheckout(page, line).map((p) => `${page}:${i + 1}: ${p} in ${JSON.stringify(line.trim())}`));
    expect(found, found.join("\n")).toEqual([]);
  });
});

// The rules the checks above stand on, on made-up pages: if the scanner or the
// slugs drifted from GitHub's, the checks would pass what GitHub breaks.
describe("the link checker itself", () => {
  it("anchors headings as GitHub does: lower case, punctuation but - and _ dropped, spaces to -, repeats numbered", () => {
    const slugger = new Slugger();
    const slug = (h: string): string => slugger.slug(headingPlainText(h));
    expect(slug("The `check --out` option: a run's verdict, again!")).toBe("the-check---out-option-a-runs-verdict-again");
    expect(slug("`stale-write-accepted`")).toBe("stale-write-accepted");
    expect(slug("snake_case and [a link](x.md) and _emphasis_")).toBe("snake_case-and-a-link-and-emphasis");
    expect(slug("Faults")).toBe("faults");
    expect(slug("Faults")).toBe("faults-1");
    expect(slug("Faults")).toBe("faults-2");
  });

  it("finds links outside code only, in every form, and skips code blocks in lists", () => {
    const page = [
      "# Title",
      "See [one](a.md) and ![two](img/b.png) and `[not](code.md)`, and [a link",
      "that wraps](c.md#x).",
      "",
      "    [indented](code.md)",
      "",
      "```",
      "[fenced](code.md)",
      "```",
      "",
      "1. A step:",
      "",
      "       [in a list's code](code.md)",
      "",
      "   [in the item](d.md)",
      "",
      '<img src="e.svg"> <a href="f.md#y">f</a>',
      "",
      "[ref]: g.md",
    ].join("\n");
    const links = pageLinks(scanPage(page)).map((l) => `${l.n} ${l.target}`);
    expect(links).toEqual(["2 a.md", "2 img/b.png", "2 c.md#x", "15 d.md", "17 e.svg", "17 f.md#y", "19 g.md"]);
  });

  it("finds a path that leaves the checkout, and lets one that stays in it be", () => {
    expect(outsideCheckout("docs/history-format.md", "the contract, in ../../elsewhere/FORMAT.md, says")).toEqual(["../../elsewhere/FORMAT.md"]);
    expect(outsideCheckout("README.md", "    cat ../notes/x.txt")).toEqual(["../notes/x.txt"]);
    expect(outsideCheckout("docs/own-lock.md", "see ../examples/redis-lock-adapter.ts")).toEqual([]);
    expect(outsideCheckout("docs/audit.md", "the contract is ../specs/FORMAT.md.")).toEqual(["../specs/FORMAT.md"]);
    expect(outsideCheckout("docs/experiments.md", "Run directory: .../lab/k1/20261127T093554.725Z")).toEqual([]);
    expect(outsideCheckout("docs/adapter-protocol.md", '"command": ["node", "bridge.mjs", "../../examples/x.ts"]')).toEqual(["../../examples/x.ts"]);
  });

  it("names a missing file, a missing heading, and accepts line anchors in code", () => {
    expect(brokenLink("README.md", "docs/no-such-page.md")).toMatch(/no such file docs\/no-such-page\.md/);
    expect(brokenLink("README.md", "#no-such-heading-anywhere")).toMatch(/README\.md has no heading #no-such-heading-anywhere/);
    expect(brokenLink("README.md", "cli/commands.ts#L10")).toBeNull();
    expect(brokenLink("README.md", "cli/commands.ts#SUBCOMMANDS")).toMatch(/takes only #L<line>/);
    expect(brokenLink("README.md", "https://example.com/nothing")).toBeNull();
  });
});
