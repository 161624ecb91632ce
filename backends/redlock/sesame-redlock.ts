// @sesamecare-oss/redlock 1.4.0, the maintained fork of node-redlock (ioredis 5,
// TypeScript), over every node, used as its README does: `acquire` with its own
// retries, `lock.extend`, `lock.release`, every setting its default. Like
// redlock 5 it decides at the first quorum and never checks validity; unlike 5
// it dates the lock from the start of the round that won, not of the first
// round (node-redlock #296), so only a slow winning round can return a lock
// already expired: `validity_ms` (expiration - now) shows it.
//
// Its retries stay on, so one library call is a whole acquire: every round's
// calls land in one record, and a failed acquire is judged on all of them
// (redlock-proof.ts looks at every grant on a node, not only the first). The
// rounds do not release between them; the unlock it sends to every node after
// the last one does, on the same connections. Its grant script refuses a key
// that exists, its own value too: when nodes come back one by one after a kill,
// a later round can meet its own earlier keys on a majority and end `busy` with
// no one else holding the lock. --acquire-timeout sets how many
// rounds: round(timeout / its retryDelay), so the default 2000 ms is its
// default 10 retries. It issues no fence: fences come from --fence-source.
import { Redlock, ExecutionError, type Lock } from "@sesamecare-oss/redlock";
import { ensureCommands } from "@sesamecare-oss/redlock/build/scripts.js";
import type { Redis } from "ioredis";
import { NpmRedlock } from "./npm-redlock.ts";
import type { RedlockClientOptions } from "../redis/nodes.ts";

/** Its scripts, as its own ensureCommands defines them on a client (it exports no text). */
function forkScripts(): { grant: string; extend: string; release: string } {
  const lua: Record<string, string> = {};
  ensureCommands({ defineCommand: (name: string, d: { lua: string }) => void (lua[name] = d.lua) } as unknown as Redis);
  return { grant: lua.acquireLock, extend: lua.extendLock, release: lua.releaseLock };
}

export class SesameRedlock extends NpmRedlock<Lock> {
  constructor(opts: RedlockClientOptions) {
    super(opts, (clients) => {
      // Typed as ioredis clients for the library; they are recorders in front of them.
      const redlock = new Redlock(clients as unknown as Redis[]);
      return {
        name: "@sesamecare-oss/redlock",
        scripts: forkScripts(),
        // Its scripts take (db, value, ttl): the lock's value is ARGV[2].
        ownerArg: 1,
        retriesItself: true,
        lock: (key, ttlMs, timeoutMs) => redlock.acquire([key], ttlMs, { retryCount: Math.round(timeoutMs / redlock.settings.retryDelay) }),
        // The lock keeps the settings it was acquired with, as its README's `lock.extend` does.
        extend: (lock, ttlMs) => lock.extend(ttlMs),
        unlock: async (lock) => {
          await lock.release();
        },
        isLockError: (e) => e instanceof ExecutionError,
      };
    });
  }
}
