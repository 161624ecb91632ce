// The pictures the docs show (docs/images/, made by `npm run docs:images`,
// scripts/screenshots.ts): every image README.md or a page under docs/ shows, by
// markdown (![alt](path), ![alt][ref]) or HTML (<img src="...">), is a file of the
// repository, a PNG, at least 600 pixels wide and under 1 MB; and every PNG in
// docs/images/ is shown by some page, so none is left behind when a page stops
// showing it. Images inside code (blocks as markdown.ts finds them, `spans`) and
// HTML comments are not shown, and images from elsewhere (https:, data:) are not
// the repository's: both are left out.
import { describe, expect, it } from "vitest";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { REPO } from "../helpers.ts";
import { docPages, readPage, scanPage } from "./markdown.ts";

const IMAGES = join(REPO, "docs", "images");
const MIN_WIDTH = 600;
const MAX_BYTES = 1024 * 1024;
const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

interface Shown {
  /** The page, relative to the checkout, and the line: "docs/ci.md:12". */
  where: string;
  src: string;
}

/** The page as a reader sees it: code blocks (markdown.ts finds them), code spans and HTML comments blanked, every line where it was. */
function visible(markdown: string): string {
  const blank = (m: string): string => m.replace(/[^\n]/g, " ");
  return scanPage(markdown)
    .lines.map((l) => (l.code ? "" : l.text))
    .join("\n")
    .replace(/<!--[\s\S]*?-->/g, blank)
    .replace(/(`+)(?!`)(?:(?!\n[ \t]*\n)[\s\S])*?[^`]\1(?!`)/g, blank);
}

/** The images `markdown` shows; `where` names its page for the messages. */
function imagesIn(markdown: string, where: string): Shown[] {
  const text = visible(markdown);
  const at = (index: number): string => `${where}:${text.slice(0, index).split("\n").length}`;
  const found: { index: number; src: string }[] = [];
  // ![alt](path), ![alt](<path with spaces>), ![alt](path "title")
  for (const m of text.matchAll(/!\[(?:[^\]\\]|\\.)*\]\(\s*(?:<([^>]*)>|([^)\s]+))(?:\s+(?:"[^"]*"|'[^']*'|\([^)]*\)))?\s*\)/g)) found.push({ index: m.index ?? 0, src: m[1] ?? m[2] });
  // ![alt][ref], ![ref][] and ![ref], with their definitions [ref]: path
  const defs = new Map<string, string>();
  for (const m of text.matchAll(/^ {0,3}\[([^\]]+)\]:\s*(?:<([^>]*)>|(\S+))/gm)) defs.set(m[1].trim().toLowerCase(), m[2] ?? m[3]);
  for (const m of text.matchAll(/!\[((?:[^\]\\]|\\.)*)\](?:\[([^\]]*)\])?(?![(:])/g)) {
    const src = defs.get((m[2] || m[1]).trim().toLowerCase());
    if (src !== undefined) found.push({ index: m.index ?? 0, src });
  }
  // <img src="...">
  for (const m of text.matchAll(/<img\b[^>]*?\ssrc\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))/gi)) found.push({ index: m.index ?? 0, src: m[1] ?? m[2] ?? m[3] });
  return found.sort((a, b) => a.index - b.index).map((f) => ({ where: at(f.index), src: f.src }));
}

/** Where the image `src` of `page` (relative to the checkout) lies; null for one from elsewhere (https:, data:, //host). */
function fileOf(page: string, src: string): string | null {
  if (/^[a-z][a-z0-9+.-]*:/i.test(src) || src.startsWith("//")) return null;
  let path = src.replace(/[?#].*$/, "");
  try {
    path = decodeURIComponent(path);
  } catch {
    // shown as written; the file is then missing
  }
  // GitHub resolves a path that starts with / from the repository's root.
  return path.startsWith("/") ? join(REPO, path) : resolve(REPO, dirname(page), path);
}

/** What is wrong with the image at `file`, or null. */
function problem(file: string): string | null {
  if (relative(REPO, file).startsWith("..")) return "outside the repository";
  if (!existsSync(file) || !statSync(file).isFile()) return "missing";
  const bytes = readFileSync(file);
  if (bytes.length < 24 || !bytes.subarray(0, 8).equals(PNG_SIGNATURE) || bytes.toString("latin1", 12, 16) !== "IHDR") return "not a PNG";
  const width = bytes.readUInt32BE(16);
  const height = bytes.readUInt32BE(20);
  if (width < MIN_WIDTH) return `${width}x${height}: narrower than ${MIN_WIDTH} px`;
  if (bytes.length >= MAX_BYTES) return `${Math.round(bytes.length / 1024)} KB: 1 MB or more`;
  return null;
}

describe("the images the docs show", () => {
  const shown = docPages().flatMap((page) => imagesIn(readPage(page), page).map((s) => ({ ...s, file: fileOf(page, s.src) })));
  const ours = shown.filter((s): s is Shown & { file: string } => s.file !== null);

  it("finds the images of markdown and HTML, and not those in code or comments", () => {
    const page = "docs/x.md";
    const sample = [
      "![a report](docs/images/a.png) and ![b](<docs/images/b c.png> \"title\")",
      '<p align="center"><img alt="x" width="700" src="docs/images/d.png"></p>',
      "![by reference][shot] and [a link, not an image](docs/images/no-1.png)",
      "",
      "[shot]: docs/images/e.png",
      "`![inline code](docs/images/no-2.png)`",
      "```markdown",
      "![in a fence](docs/images/no-3.png)",
      "```",
      "<!-- ![commented](docs/images/no-4.png) -->",
      "",
      "    ![in an indented block](docs/images/no-5.png)",
      "",
      "![after them all](images/f.png)",
    ].join("\n");
    expect(visible(sample).split("\n")).toHaveLength(sample.split("\n").length);
    expect(imagesIn(sample, "x.md")).toEqual([
      { where: "x.md:1", src: "docs/images/a.png" },
      { where: "x.md:1", src: "docs/images/b c.png" },
      { where: "x.md:2", src: "docs/images/d.png" },
      { where: "x.md:3", src: "docs/images/e.png" },
      { where: "x.md:14", src: "images/f.png" },
    ]);
    expect(fileOf(page, "https://img.shields.io/badge/x.png")).toBeNull();
    expect(fileOf(page, "images/a.png#dark")).toBe(join(REPO, "docs", "images", "a.png"));
    expect(fileOf(page, "/docs/images/a%20b.png")).toBe(join(REPO, "docs", "images", "a b.png"));
  });

  it("each is a PNG in the repository, at least 600 px wide and under 1 MB", () => {
    // No page may show an image yet: then there is nothing to check, and that passes.
    const wrong = ours.map((s) => ({ s, why: problem(s.file) })).filter((x) => x.why !== null).map((x) => `${x.s.where}: ${x.s.src}: ${x.why}`);
    expect(wrong).toEqual([]);
  });

  // Until a page shows a first image, the pictures in docs/images/ wait for the pages that will show them.
  it.skipIf(ours.length === 0)("every PNG in docs/images/ is shown by some page", () => {
    const used = new Set(ours.map((s) => s.file));
    const pngs = existsSync(IMAGES) ? readdirSync(IMAGES).filter((f) => f.toLowerCase().endsWith(".png")) : [];
    expect(pngs.filter((f) => !used.has(join(IMAGES, f))).map((f) => `docs/images/${f} is shown by no page`)).toEqual([]);
  });
});
