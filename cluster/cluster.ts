// What a running lock service is to the rest of the run: its nodes, and the
// optional abilities a backend may offer the nemeses (Jepsen's separate
// interfaces for kill, pause and clock faults). Pausing a server is asked of the
// deployment it runs in (a SIGSTOP to a local process or to a container's).
import type { ServerNode } from "./redis.ts";

/** Abilities a nemesis may need from a backend's cluster: kill + restart, skewClock. */
export type ClusterAbility = "kill" | "clock";

export interface Cluster {
  nodes: ServerNode[];
  /** Freeze one server (SIGSTOP, or the freezer of its container); false when it is not running. */
  pause(name: string): Promise<boolean>;
  /** Thaw it again. */
  resume(name: string): Promise<boolean>;
  /** Whether it is running now (not killed, not dead). */
  running(name: string): boolean;
  /** SIGKILL one node; it stays down until restart. */
  kill?(name: string): Promise<void>;
  /** Start a killed node again (same port, same data directory). */
  restart?(name: string): Promise<void>;
  /** Move one node's wall clock to real time + offsetMs (0 puts it back). */
  skewClock?(name: string, offsetMs: number): Promise<void>;
  /** The members' own network (etcd): cut the components off from each other, or heal. */
  peers?: {
    partition(components: string[][]): Promise<void>;
    heal(): Promise<void>;
  };
  /** The member that leads now (consensus backends), or null when none is known. */
  leader?(): Promise<string | null>;
}
