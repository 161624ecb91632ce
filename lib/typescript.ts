// A built command (plain JavaScript in dist/) that is asked to load TypeScript of
// the user's own, a client adapter like examples/redis-lock-adapter.ts, runs
// itself again under tsx's loader, and so do the workers it starts (lib/paths.ts
// passes a loaded tsx on): loading tsx's hooks into a process that is already
// running loads a .ts file outside any "type": "module" package as CommonJS, and
// an adapter written as an ES module then fails to load.
//
// The second process is the real run; this one only stands in front of it. It
// starts it in a process group of its own and passes each signal on once (a
// terminal's Ctrl-C reaches only this one), and the child watches a pipe to us,
// so that it heals and stops if we are killed outright.
import { spawn } from "node:child_process";
import { constants } from "node:os";
import { onParentGone } from "./lifeline.ts";
import { BUILT, TSX_LOADED, tsxUrl } from "./paths.ts";

/** Whether an option value names a TypeScript module (a --client adapter). */
export function namesTypeScript(argv: readonly string[], option: string): boolean {
  for (let i = 0; i < argv.length; i++) {
    const value = argv[i] === `--${option}` ? argv[i + 1] : argv[i].startsWith(`--${option}=`) ? argv[i].slice(option.length + 3) : undefined;
    if (value !== undefined && /\.[cm]?ts$/.test(value)) return true;
  }
  return false;
}

/**
 * When this built process must load TypeScript and has no loader for it: runs the
 * same command again under tsx and resolves with its exit code. Otherwise null:
 * go on in this process.
 */
export function rerunWithTypeScript(needed: boolean): Promise<number> | null {
  if (!needed || !BUILT || TSX_LOADED) return null;
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...process.execArgv, "--import", tsxUrl(), process.argv[1], ...process.argv.slice(2)], {
      stdio: ["pipe", "inherit", "inherit"],
      env: { ...process.env, FENCECHECK_LIFELINE: "stdin" },
      detached: true,
    });
    child.stdin?.on("error", () => {});
    const pass = (signal: NodeJS.Signals) => () => void child.kill(signal);
    const passed: Array<[NodeJS.Signals, () => void]> = (["SIGINT", "SIGTERM", "SIGHUP"] as const).map((s) => [s, pass(s)]);
    for (const [s, f] of passed) process.on(s, f);
    // A soak that runs us watches for its own death through our stdin; we pass it on as SIGTERM.
    if (process.env.FENCECHECK_LIFELINE === "stdin") onParentGone({ watchStdin: true }, () => void child.kill("SIGTERM"));
    child.on("exit", (code, signal) => {
      for (const [s, f] of passed) process.off(s, f);
      resolve(code ?? 128 + (signal ? constants.signals[signal] : 0));
    });
    child.on("error", (err) => {
      process.stderr.write(`fencecheck: could not run again under tsx: ${err.message}\n`);
      resolve(255);
    });
  });
}
