// A server that runs as a system account of its own, as Postgres and MariaDB do
// (both refuse root): the account's ids, and a data directory that account can
// reach. Node has no getpwnam, so the ids come from /etc/passwd.
import { chmodSync, chownSync, mkdirSync, mkdtempSync, readFileSync, statSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import type { ProcessGroup } from "./processes.ts";
import type { Deployment } from "./deployment.ts";

export interface ServerUser {
  uid: number;
  gid: number;
  /** The account's name, for messages. */
  name: string;
}

/** The ids of a system account its package makes; `install` says how to get it when it is missing. */
export function systemUser(name: string, install: string): ServerUser {
  const line = readFileSync("/etc/passwd", "utf8").split("\n").find((l) => l.startsWith(`${name}:`));
  if (!line) throw new Error(`there is no ${name} user: ${install}`);
  const [, , uid, gid] = line.split(":");
  return { uid: Number(uid), gid: Number(gid), name };
}

/** Whether `user` can pass through every directory down to `dir`. */
function reachable(dir: string, user: ServerUser): boolean {
  for (let d = resolve(dir); ; d = dirname(d)) {
    const s = statSync(d);
    const x = s.uid === user.uid ? 0o100 : s.gid === user.gid ? 0o010 : 0o001;
    if (!(s.mode & x)) return false;
    if (d === dirname(d)) return true;
  }
}

/**
 * The directory a server run as `user` keeps its files in, made and given to
 * that user (undefined: the server runs as we do): data/<name> of the run
 * directory when the user can pass through every directory above it. A store in
 * root's home (/root is 0700), a user's (0750 on Ubuntu) or a mktemp directory
 * (0700) is out of its reach; the files then go to a directory of the run's own
 * under the system's temporary directory, data/<name> links to it, and it is
 * removed with the run's servers (by the reaper if the runner dies) unless
 * --keep-data keeps it. A container is given the directory itself (a mount): no
 * directory above it need be passable, and its start script gives it to the
 * image's own user.
 */
export function serverDataDir(group: ProcessGroup, runDir: string, name: string, user: ServerUser | undefined, deployment?: Deployment): string {
  const inRun = join(runDir, "data", name);
  mkdirSync(dirname(inRun), { recursive: true });
  if (deployment && deployment.name !== "local") {
    mkdirSync(inRun, { recursive: true });
    return inRun;
  }
  let dir = inRun;
  if (user && !reachable(dirname(inRun), user)) {
    const outside = mkdtempSync(join(tmpdir(), `fencecheck-${name}-`));
    group.removeAtTeardown(outside);
    // mkdtemp makes it 0700: the server's user must pass through to its own directory inside.
    chmodSync(outside, 0o711);
    if (!reachable(outside, user))
      throw new Error(`the ${user.name} user can reach neither ${dirname(inRun)} nor ${outside} (set TMPDIR to a directory it can pass through, e.g. /var/tmp)`);
    dir = join(outside, name);
    symlinkSync(dir, inRun);
  }
  ownedBy(dir, user);
  return dir;
}

/** A directory of the server's own: made, given to its user, closed to others. */
export function ownedBy(dir: string, user: ServerUser | undefined): void {
  mkdirSync(dir, { recursive: true });
  if (user) chownSync(dir, user.uid, user.gid);
  chmodSync(dir, 0o700);
}
