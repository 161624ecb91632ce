// Which part of the store a request names, decided before anything is opened. The
// raw request path is split and decoded segment by segment (a URL parser would
// quietly resolve `..` first), and whatever it names is resolved through every
// symlink and must still lie inside the store: a `..`, an encoded slash or a link
// that points out of the store all end as "not found".
import { realpath, stat } from "node:fs/promises";
import { join, sep } from "node:path";
import { RUN_FILES } from "../store/index.ts";
import { SOAK_FILES } from "../soak/index.ts";
import { isRunDir, isSoakDir, SERVED_FILES } from "./store.ts";

const SOAK_SERVED: readonly string[] = [SOAK_FILES.page, SOAK_FILES.summary, SOAK_FILES.plan, SOAK_FILES.records];

export type Target =
  | { kind: "list" }
  /** A run's page; `rel` as the store lists it. */
  | { kind: "run"; rel: string; dir: string }
  /** The same without its trailing slash: redirect, so the page's relative links work. */
  | { kind: "redirect"; location: string }
  | { kind: "file"; path: string; name: string };

export const RUNS_PREFIX = "/runs/";

/** null: not found (or not ours to show). `root` must already be a real path. */
export async function resolveTarget(root: string, rawUrl: string): Promise<Target | null> {
  const path = rawUrl.split("?", 1)[0];
  if (path === "/") return { kind: "list" };
  if (!path.startsWith(RUNS_PREFIX)) return null;
  const raw = path.slice(RUNS_PREFIX.length).split("/");
  const trailingSlash = raw.at(-1) === "";
  if (trailingSlash) raw.pop();
  const segs = decodeSegments(raw);
  if (!segs || segs.length === 0) return null;

  if (trailingSlash) {
    const dir = await inside(root, join(root, ...segs));
    if (dir && (await isDir(dir)) && (await isSoakDir(dir))) return { kind: "redirect", location: `${RUNS_PREFIX}${raw.join("/")}/${SOAK_FILES.page}` };
    return dir && (await isDir(dir)) && (await isRunDir(dir)) ? { kind: "run", rel: segs.join("/"), dir } : null;
  }
  const name = segs[segs.length - 1];
  // A soak's own files: its summary page and data, and its runs' terminal output.
  const underOutput = segs.length >= 3 && segs[segs.length - 2] === SOAK_FILES.output;
  if (underOutput || SOAK_SERVED.includes(name)) {
    const dir = await inside(root, join(root, ...segs.slice(0, underOutput ? -2 : -1)));
    if (!dir || !(await isSoakDir(dir))) return null;
    const file = await inside(root, join(root, ...segs));
    return file && (await isFile(file)) ? { kind: "file", path: file, name } : null;
  }
  const underLogs = segs.length >= 3 && segs[segs.length - 2] === RUN_FILES.logs;
  const runSegs = underLogs ? segs.slice(0, -2) : segs.slice(0, -1);
  if (underLogs || SERVED_FILES.includes(name)) {
    const dir = await inside(root, join(root, ...runSegs));
    if (!dir || !(await isRunDir(dir))) return null;
    const file = await inside(root, join(root, ...segs));
    return file && (await isFile(file)) ? { kind: "file", path: file, name } : null;
  }
  const dir = await inside(root, join(root, ...segs));
  if (dir && (await isDir(dir)) && (await isRunDir(dir))) return { kind: "redirect", location: `${RUNS_PREFIX}${raw.join("/")}/` };
  return null;
}

/** The link to a run (rel as listed) or to one of its files. */
export function runHref(rel: string, ...file: string[]): string {
  return RUNS_PREFIX + [...rel.split("/"), ...file].map(encodeURIComponent).join("/") + (file.length === 0 ? "/" : "");
}

function decodeSegments(raw: string[]): string[] | null {
  const out: string[] = [];
  for (const r of raw) {
    let s: string;
    try {
      s = decodeURIComponent(r);
    } catch {
      return null;
    }
    if (s === "" || s === "." || s === ".." || /[/\\\0]/.test(s)) return null;
    out.push(s);
  }
  return out;
}

/** The real path of `path` if it exists and lies in `root` (itself a real path). */
async function inside(root: string, path: string): Promise<string | null> {
  let real: string;
  try {
    real = await realpath(path);
  } catch {
    return null;
  }
  return real === root || real.startsWith(root.endsWith(sep) ? root : root + sep) ? real : null;
}

async function isDir(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch {
    return false;
  }
}

async function isFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}
