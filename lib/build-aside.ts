// Making something in fencecheck's cache that other processes may be making at
// the same moment, and that a Ctrl-C may cut short: it is built into a directory
// of its own beside the target, named after its builder, and renamed into place.
// A reader finds nothing or the whole; two builders of one thing both finish and
// the second's copy goes (they are the same); what a builder that is gone left
// is swept by the next build (lib/owner.ts: a pid given to another process since
// is no owner). Its steps are commands whose failure says the command and the
// tail of what it wrote.
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { ownerAlive, ownerLabel } from "./owner.ts";

const ASIDE = ".building-";
let builds = 0;

/** `.building-<target>@<host>+<pid>+<start>+<n>`: its owner label with "/" as "+" (a name, not a path), and a count for builds at once in one process. */
const asideOf = (final: string): string => join(dirname(final), `${ASIDE}${basename(final)}@${ownerLabel().replaceAll("/", "+")}+${++builds}`);

const ownerOf = (name: string): string | null => {
  const at = name.lastIndexOf("@");
  return at < 0 ? null : name.slice(at + 1).split("+").slice(0, 3).join("/");
};

/**
 * Makes `final` with `make(aside)`, which builds into `aside`, unless `final` is
 * there already. Whether this call put it there (false: it was there, or another
 * builder's came first). A `make` that throws leaves nothing and throws on.
 */
export async function buildAside(final: string, make: (aside: string) => Promise<void>): Promise<boolean> {
  if (existsSync(final)) return false;
  const parent = dirname(final);
  mkdirSync(parent, { recursive: true });
  for (const name of readdirSync(parent)) {
    const owner = name.startsWith(ASIDE) ? ownerOf(name) : null;
    if (owner !== null && !ownerAlive(owner)) rmSync(join(parent, name), { recursive: true, force: true });
  }
  const aside = asideOf(final);
  try {
    await make(aside);
    try {
      renameSync(aside, final);
      return true;
    } catch (err) {
      // Another builder's came first: the same thing.
      if (existsSync(final)) return false;
      throw err;
    }
  } finally {
    rmSync(aside, { recursive: true, force: true });
  }
}

/** One command of a build. */
export interface BuildStep {
  command: string;
  args: string[];
  cwd: string;
  env?: NodeJS.ProcessEnv;
  /** Tried when this one fails (Maven online, when offline lacked something). */
  orElse?: BuildStep;
}

const OUTPUT_TAIL = 15;

/** Runs a step; its exit code and the tail of what it wrote. */
function runOnce(step: BuildStep): Promise<{ code: number; tail: string }> {
  return new Promise((done) => {
    const out: string[] = [];
    const child = spawn(step.command, step.args, { cwd: step.cwd, env: step.env ?? process.env, stdio: ["ignore", "pipe", "pipe"] });
    const keep = (b: Buffer): void => {
      out.push(...b.toString("utf8").split("\n").filter((l) => l.trim() !== ""));
      if (out.length > OUTPUT_TAIL) out.splice(0, out.length - OUTPUT_TAIL);
    };
    child.stdout.on("data", keep);
    child.stderr.on("data", keep);
    child.on("error", (err) => done({ code: 127, tail: err.message }));
    child.on("close", (code, signal) => done({ code: code ?? (signal ? 128 : 1), tail: out.join("\n") }));
  });
}

const shown = (s: BuildStep): string => [s.command, ...s.args].map((w) => (/[\s"']/.test(w) ? JSON.stringify(w) : w)).join(" ");

/** Runs the steps in order (a step's orElse when it fails); throws at the first that fails, naming the command, its exit code and the tail of its output. */
export async function runSteps(steps: readonly BuildStep[]): Promise<void> {
  for (const first of steps) {
    let step = first;
    let r = await runOnce(step);
    if (r.code !== 0 && step.orElse) r = await runOnce((step = step.orElse));
    if (r.code !== 0) throw new Error(`\`${shown(step)}\` exited with code ${r.code}${r.tail ? `:\n${r.tail}` : ""}`);
  }
}
