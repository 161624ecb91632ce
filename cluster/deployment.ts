// Where a run's lock servers run: the one seam between what a backend's servers
// are (backends/redis/server.ts, backends/etcd/server.ts say it once, as a ServerSpec) and how they
// are started, signalled, killed and removed. Local child processes are the
// default; containers (docker/) are the other way (Jepsen's DB protocol against
// its `control` layer). Adding a deployment touches no backend.
import type { ProcessGroup } from "./processes.ts";
import { faketimeEnv } from "./faketime.ts";

/** What a container of a server is made from: a Dockerfile and the files it copies, relative to the repository's root (docker/images.ts). */
export interface ImageSource {
  /** "redis": the image's name (fencecheck-redis:<hash of its sources>). */
  name: string;
  dockerfile: string;
  files: readonly string[];
}

/**
 * A server program as its backend declares it (backends/NAME/), which a
 * deployment starts: the program a local process runs, and the image and
 * command of its container, where it has one.
 */
export interface ServerProgram {
  /** "redis", "pgbouncer": names it in messages. */
  name: string;
  /** The program a local process runs: a path, or a name on PATH. */
  local(): string;
  /** In a container: its image, and the command it runs (its arguments follow). Absent: it has no image (--deploy docker is refused). */
  container?: { image: ImageSource; command: string };
  /** The ports it listens on when not told otherwise: a run never takes them, so it cannot talk to (or be taken for) a server of yours. */
  defaultPorts?: readonly number[];
}

export interface ServerSpec {
  /** "redis-1", "etcd-2": unique in the run. */
  name: string;
  program: ServerProgram;
  /** The program's arguments (after its name). Paths in them lie under dataDir. */
  args: string[];
  /** Its own directory on this machine (a container sees it at the same path). */
  dataDir: string;
  /** Where its stdout and stderr go on this machine. */
  logFile: string;
  /** Directories of this machine it only reads (a program's jars in fencecheck's cache): a container sees them read-only at the same paths. */
  mounts?: readonly string[];
  /** The ports it listens on: on 127.0.0.1 here, whatever runs it. */
  ports: number[];
  /** Run it under libfaketime, reading its wall-clock offset from this file. */
  clockFile?: string;
  /**
   * A local process runs as this user (Postgres and pgbouncer refuse root); a
   * container's image drops to its own server user instead.
   */
  user?: { uid: number; gid: number };
  /**
   * It forks children that serve its clients (Postgres' backends, each in a
   * session of its own): a pause must hold them all, so a local one is frozen
   * with its children and a container by the cgroup freezer, whatever --pause-mode.
   */
  withChildren?: boolean;
}

/** How a paused server is held: SIGSTOP to its process, or the cgroup freezer (containers). */
export type PauseMode = "signal" | "freeze";

export interface Deployment {
  name: "local" | "docker";
  /** The address a server binds inside wherever it runs (loopback here; every interface inside a container, published on loopback only). */
  bindHost: string;
  /** Where members reach a member's peer port directly (members talking to each other without our fault proxy). */
  memberHost(name: string): string;
  /**
   * Where servers of this kind can reach a listener of this machine's (a peer proxy
   * of our fault proxy), and so where such a listener must bind; it answers once
   * that address exists (a container network's bridge comes up with its first container).
   */
  hostAddress(program: ServerProgram): Promise<string>;
  /** Start a server (again, after a kill: the same data directory). */
  start(spec: ServerSpec): Promise<void>;
  /** Whether it is running now (started and not killed or dead). */
  running(name: string): boolean;
  /** SIGKILL it; it stays down until started again. */
  kill(name: string): Promise<void>;
  pause(name: string): Promise<boolean>;
  resume(name: string): Promise<boolean>;
  /** Cut a server off the network its peers reach it on, or join it again (containers only). */
  network?: { disconnect(name: string): Promise<void>; connect(name: string): Promise<void> };
}

/** Local child processes, in the run's process group (its teardown and reaper stop them). */
export function localDeployment(group: ProcessGroup): Deployment {
  return {
    name: "local",
    bindHost: "127.0.0.1",
    memberHost: () => "127.0.0.1",
    hostAddress: async () => "127.0.0.1",
    async start(spec) {
      const env = spec.clockFile ? faketimeEnv(spec.clockFile) : undefined;
      await group.spawn({ name: spec.name, command: spec.program.local(), args: spec.args, logFile: spec.logFile, env, user: spec.user, withChildren: spec.withChildren });
    },
    running: (name) => group.get(name)?.alive ?? false,
    kill: (name) => group.kill(name),
    pause: async (name) => group.pause(name),
    resume: async (name) => group.resume(name),
  };
}
