// What the docs tests read in a page: which lines are code and which are prose,
// its headings as GitHub anchors them, and its links. No markdown library is a
// dependency of ours, and the pages use a small part of the language, so this
// is a line scanner after CommonMark's rules for what matters here: fenced and
// indented code blocks (also inside list items, where the page's own
// indentation moves), ATX and setext headings, and links outside code.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { REPO } from "../helpers.ts";

/** README.md and every page under docs/, as paths relative to the checkout ("docs/ci.md"). */
export function docPages(): string[] {
  const under = (dir: string): string[] =>
    readdirSync(join(REPO, dir), { withFileTypes: true })
      .sort((a, b) => a.name.localeCompare(b.name))
      .flatMap((e) => (e.isDirectory() ? under(join(dir, e.name)) : e.name.endsWith(".md") ? [join(dir, e.name)] : []));
  return ["README.md", ...under("docs")];
}

export function readPage(page: string): string {
  return readFileSync(join(REPO, page), "utf8");
}

/** A code block: its lines with the block's own indentation taken off. */
export interface CodeBlock {
  fenced: boolean;
  /** A fenced block's info string ("", "text", "json", ...); "" for an indented one. */
  info: string;
  lines: Array<{ n: number; text: string }>;
}

export interface Heading {
  n: number;
  level: number;
  /** The heading's source text (markdown, as written). */
  text: string;
  /** GitHub's anchor for it, duplicates numbered. */
  slug: string;
}

export interface ScannedPage {
  /** Each line (1-based n) and whether it belongs to a code block. */
  lines: Array<{ n: number; text: string; code: boolean }>;
  blocks: CodeBlock[];
  headings: Heading[];
  /** Every fragment a link may name: the headings' slugs and the ids and names of HTML anchors. */
  anchors: Set<string>;
}

const indentOf = (s: string): number => {
  let col = 0;
  for (const ch of s) {
    if (ch === " ") col++;
    else if (ch === "\t") col += 4 - (col % 4);
    else break;
  }
  return col;
};

/** `s` without its first `n` columns of indentation (tabs expanded). */
const dedent = (s: string, n: number): string => {
  let col = 0;
  let i = 0;
  while (i < s.length && col < n && (s[i] === " " || s[i] === "\t")) {
    col += s[i] === "\t" ? 4 - (col % 4) : 1;
    i++;
  }
  return " ".repeat(Math.max(0, col - n)) + s.slice(i);
};

const LIST_ITEM = /^([-*+]|\d{1,9}[.)])( +|$)/;

export function scanPage(source: string): ScannedPage {
  const raw = source.split(/\r?\n/);
  const lines: ScannedPage["lines"] = [];
  const blocks: CodeBlock[] = [];
  const headingLines: Array<{ n: number; level: number; text: string }> = [];
  // The content columns of the list items the current line may belong to, innermost last.
  let items: number[] = [];
  let fence: { char: string; len: number; indent: number; block: CodeBlock } | null = null;
  let indented: CodeBlock | null = null;
  // Blank lines seen inside an indented block: they belong to it only if it goes on.
  let pendingBlank: Array<{ n: number }> = [];
  let prev: "blank" | "paragraph" | "other" = "blank";

  for (let i = 0; i < raw.length; i++) {
    const text = raw[i];
    const n = i + 1;
    if (fence) {
      const closing = new RegExp(`^ {0,3}${fence.char === "`" ? "`" : "~"}{${fence.len},}\\s*$`);
      if (closing.test(dedent(text, fence.indent))) {
        fence = null;
        prev = "other";
      } else fence.block.lines.push({ n, text: dedent(text, fence.indent) });
      lines.push({ n, text, code: true });
      continue;
    }
    if (text.trim() === "") {
      if (indented) pendingBlank.push({ n });
      lines.push({ n, text, code: false });
      prev = "blank";
      continue;
    }
    const indent = indentOf(text);
    // Leave the list items this line is not indented into, unless it continues a paragraph lazily.
    if (!(prev === "paragraph" && !indented)) items = items.filter((c) => c <= indent);
    const base = items.length ? items[items.length - 1] : 0;
    const rel = indent - base;
    const body = dedent(text, base);

    // An indented code block: four columns into its container, and not the continuation of a paragraph.
    if (rel >= 4 && (indented || prev !== "paragraph")) {
      if (!indented) {
        indented = { fenced: false, info: "", lines: [] };
        blocks.push(indented);
      }
      for (const b of pendingBlank) {
        indented.lines.push({ n: b.n, text: "" });
        const line = lines.find((l) => l.n === b.n);
        if (line) line.code = true;
      }
      pendingBlank = [];
      indented.lines.push({ n, text: dedent(text, base + 4) });
      lines.push({ n, text, code: true });
      prev = "other";
      continue;
    }
    indented = null;
    pendingBlank = [];
    lines.push({ n, text, code: false });

    const open = /^ {0,3}(`{3,}|~{3,})\s*([^`\s]*)[^`]*$/.exec(body);
    if (open) {
      const block: CodeBlock = { fenced: true, info: open[2].toLowerCase(), lines: [] };
      blocks.push(block);
      fence = { char: open[1][0], len: open[1].length, indent: base + indentOf(body), block };
      lines[lines.length - 1].code = true;
      prev = "other";
      continue;
    }
    const atx = /^ {0,3}(#{1,6})(?:\s+(.*?))?(?:\s+#+)?\s*$/.exec(body);
    if (atx) {
      headingLines.push({ n, level: atx[1].length, text: (atx[2] ?? "").trim() });
      prev = "other";
      continue;
    }
    const underline = /^ {0,3}(=+|-+)\s*$/.exec(body);
    if (underline && prev === "paragraph") {
      headingLines.push({ n: n - 1, level: underline[1][0] === "=" ? 1 : 2, text: raw[i - 1].trim() });
      prev = "other";
      continue;
    }
    const item = LIST_ITEM.exec(text.trimStart());
    if (item) {
      // A list item interrupts a paragraph, so it is never a lazy continuation: its own column places it.
      const at = indent;
      items = items.filter((c) => c <= at);
      // A marker followed by five spaces or more starts the item with an indented code block: its content is one space in.
      const spaces = item[2].length;
      items.push(at + item[1].length + (spaces === 0 || spaces > 4 ? 1 : spaces));
      prev = "paragraph";
      continue;
    }
    prev = /^ {0,3}(?:[-*_]\s*){3,}$/.test(body) ? "other" : "paragraph";
  }

  headingLines.sort((a, b) => a.n - b.n);
  const slugger = new Slugger();
  const headings = headingLines.map((h) => ({ ...h, slug: slugger.slug(headingPlainText(h.text)) }));
  const anchors = new Set(headings.map((h) => h.slug));
  for (const l of lines)
    if (!l.code) for (const m of l.text.matchAll(/<a\s[^>]*\b(?:name|id)\s*=\s*["']([^"']+)["']/gi)) anchors.add(m[1]);
  return { lines, blocks, headings, anchors };
}

/** A heading's text as GitHub renders it, before the slug: links by their text, no code or emphasis marks, no HTML tags. */
export function headingPlainText(markdown: string): string {
  return markdown
    .replace(/!\[([^\]]*)\]\([^)]*\)/g, "")
    .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/\[([^\]]*)\]\[[^\]]*\]/g, "$1")
    .replace(/<[^>]+>/g, "")
    .replace(/`+/g, "")
    .replace(/(^|[^\p{L}\p{N}])_+([^_]+?)_+(?=[^\p{L}\p{N}]|$)/gu, "$1$2")
    .replace(/\*+/g, "")
    .replace(/&amp;/g, "&")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"');
}

/**
 * GitHub's anchors (github-slugger): lower case; everything but letters, marks,
 * digits, connector punctuation (`_`), spaces and `-` removed; each space a `-`;
 * a repeated slug numbered -1, -2, ... in order.
 */
export class Slugger {
  private seen = new Map<string, number>();

  static base(text: string): string {
    return text.toLowerCase().replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "").replace(/ /g, "-");
  }

  slug(text: string): string {
    const original = Slugger.base(text);
    let slug = original;
    while (this.seen.has(slug)) {
      const count = this.seen.get(original)! + 1;
      this.seen.set(original, count);
      slug = `${original}-${count}`;
    }
    this.seen.set(slug, 0);
    return slug;
  }
}

export interface Link {
  /** The line the link starts on. */
  n: number;
  target: string;
  /** How it is written: markdown inline, reference definition, or HTML attribute. */
  form: "inline" | "reference" | "html";
}

/**
 * The links of a page outside its code blocks and code spans: `[text](target)`,
 * `![alt](target)`, `[label]: target`, `<img src>` and `<a href>`. The prose is
 * searched as one text, so a link whose text wraps over two lines is found.
 */
export function pageLinks(scanned: ScannedPage): Link[] {
  const prose = scanned.lines.map((l) => (l.code ? "" : l.text));
  const text = prose.join("\n");
  // Code spans blanked out, keeping every offset (and line break) where it was.
  const blanked = text.replace(/(`+)([\s\S]*?[^`])\1(?!`)/g, (m) => m.replace(/[^\n]/g, " "));
  const starts: number[] = [0];
  for (let i = 0; i < blanked.length; i++) if (blanked[i] === "\n") starts.push(i + 1);
  const lineAt = (offset: number): number => {
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (starts[mid] <= offset) lo = mid;
      else hi = mid - 1;
    }
    return lo + 1;
  };
  const links: Link[] = [];
  const inline = /!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*(<[^>\n]*>|[^()\s]+(?:\([^()\s]*\)[^()\s]*)*)(?:\s+(?:"[^"]*"|'[^']*'|\([^)]*\)))?\s*\)/g;
  for (const m of blanked.matchAll(inline)) links.push({ n: lineAt(m.index!), target: m[1].replace(/^<|>$/g, ""), form: "inline" });
  const reference = /^ {0,3}\[[^\]]+\]:\s*(<[^>\n]*>|\S+)/gm;
  for (const m of blanked.matchAll(reference)) links.push({ n: lineAt(m.index!), target: m[1].replace(/^<|>$/g, ""), form: "reference" });
  const html = /<(?:img|a)\b[^>]*?\s(?:src|href)\s*=\s*(?:"([^"]*)"|'([^']*)')/gi;
  for (const m of blanked.matchAll(html)) links.push({ n: lineAt(m.index!), target: m[1] ?? m[2], form: "html" });
  return links.sort((a, b) => a.n - b.n);
}

/**
 * The first table under the heading `heading` matches, before the next heading:
 * its columns' names and each row as cells by column name, trimmed and without
 * code spans' backticks. Tests that hold a page's table to the code read it here,
 * by column name, so that a column added to the table moves nothing they read.
 */
export function sectionTable(source: string, heading: RegExp): { columns: string[]; rows: Array<Record<string, string>> } | null {
  const lines = source.split("\n");
  const start = lines.findIndex((l) => /^#+\s/.test(l) && heading.test(l));
  if (start < 0) return null;
  const end = lines.findIndex((l, i) => i > start && /^#+\s/.test(l));
  const section = lines.slice(start + 1, end < 0 ? undefined : end);
  const first = section.findIndex((l) => l.trim().startsWith("|"));
  if (first < 0) return null;
  const after = section.findIndex((l, i) => i > first && !l.trim().startsWith("|"));
  const cells = (l: string) => l.trim().replace(/^\||\|$/g, "").split("|").map((c) => c.trim().replace(/`/g, ""));
  const [columns, , ...body] = section.slice(first, after < 0 ? undefined : after).map(cells);
  return { columns, rows: body.map((r) => Object.fromEntries(columns.map((c, i) => [c, r[i] ?? ""]))) };
}
