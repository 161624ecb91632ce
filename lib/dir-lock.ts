// One at a time across the machine: a directory as a lock, taken by whoever makes
// it (mkdir is atomic), for work that several fencecheck processes may start at
// once (building an image, installing packages). A lock older than the slowest
// such work is one whose holder died, and is broken.
import { mkdirSync, rmdirSync, statSync } from "node:fs";
import { sleep } from "./time.ts";

export interface DirLockOptions<T> {
  /** How old a lock must be to count as left by a holder that died. */
  staleMs: number;
  /** Called once, when the lock is found taken. */
  waiting?: () => void;
  /** Asked after each wait: a value means another holder did the work, and it is returned without taking the lock. */
  doneMeanwhile?: () => Promise<T | null>;
}

export async function withDirLock<T>(lock: string, opts: DirLockOptions<T>, work: () => Promise<T>): Promise<T> {
  let told = false;
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch {
      try {
        if (Date.now() - statSync(lock).mtimeMs > opts.staleMs) rmdirSync(lock);
      } catch {
        // gone meanwhile
      }
      if (!told) opts.waiting?.();
      told = true;
      await sleep(500);
      const done = (await opts.doneMeanwhile?.()) ?? null;
      if (done !== null) return done;
    }
  }
  try {
    return await work();
  } finally {
    rmdirSync(lock);
  }
}
