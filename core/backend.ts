// What a backend, a lock service under test, declares to fencecheck: once, in the
// entry file of its folder (backends/NAME/index.ts), as Jepsen keeps each database
// in one namespace. Its servers and where they can run, its shipped clients with
// their facts, its own options and the rules between them, what it needs
// installed, the versions run.json records, and what it offers the rest of a run
// (a store for the protected resource, fence counters for clients whose lock
// issues none). The generic machinery (runner, cluster, clients, setup, ...)
// reads only this, and never names a backend.
import type { ProcessGroup } from "../cluster/processes.ts";
import type { PortPlan } from "../cluster/ports.ts";
import type { Cluster, ClusterAbility, ServerNode } from "../cluster/cluster.ts";
import type { Deployment, PauseMode, ServerProgram } from "../cluster/deployment.ts";
import type { ExternalServer, PlacedServer } from "../cluster/external.ts";
import type { FenceCounter, LockKinds, MakeClient, ServiceAccess } from "../clients/index.ts";
import type { OptionSpec, OptionValue } from "../lib/index.ts";
import type { Requirement } from "../setup/requirements.ts";
import type { Scenario } from "./scenario.ts";
import type { WorkloadOptions } from "../workloads/index.ts";

/** Where a backend's servers run (--deploy). */
export type DeployName = "local" | "docker" | "external";

/** How servers are started, from the generic options; a backend's own options are in BackendContext.options. */
export interface ServerOptions {
  /** Start servers whose wall clocks the clock nemesis can move (costs a libfaketime preload). */
  skewableClocks: boolean;
  /** Where the servers run: child processes, containers (docker/), or someone else's (cluster/external.ts). */
  deploy: DeployName;
  /** --deploy external: the servers given, with their control commands. */
  external: ExternalServer[] | null;
  /** How pause-server holds a server (the freezer: containers only). */
  pauseMode: PauseMode;
  /**
   * Members cut off from each other through the fault proxy (its toxics on their
   * peer proxies: block_from, zk_sid_only), off their container network, or never
   * (no nemesis of the run cuts members: their peer proxies then carry no toxic).
   */
  memberPartitions: "proxy" | "network" | "none";
}

/** A backend's own options as parsed (--NAME: value), the ones it declares only. */
export type BackendOptions = Readonly<Record<string, OptionValue | undefined>>;

export interface BackendContext {
  group: ProcessGroup;
  /** Where the servers run. */
  deployment: Deployment;
  ports: PortPlan;
  runDir: string;
  /**
   * The run's Toxiproxy API once it is up, for backends whose members talk to each
   * other (through it). The others start their servers without waiting for it:
   * the fault proxy, a Node process, takes a few hundred ms to come up.
   */
  toxiproxyUrl(): Promise<string>;
  serverOptions: ServerOptions;
  /** Its own options (BackendOptions). */
  options: BackendOptions;
  /** The --client the run uses, for a backend whose server count depends on it; absent: its default client. */
  client?: string;
  /**
   * The run's --ttl, for a backend whose servers, not its clients, set how long a
   * hold outlives a silent holder (Hazelcast's CP session TTL is its members'
   * config); absent: the default.
   */
  ttlMs?: number;
}

/** What a service of the user's is told of the run: where its servers are given, how long the run lasts, its keys' prefix (a Test is one). */
export interface RunOnService {
  client: string;
  toxiproxy: string | null;
  serverOptions: ServerOptions;
  workloadOptions: Pick<WorkloadOptions, "keyPrefix" | "ttlMs">;
  timeLimitS: number;
  graceMs: number;
}

/** What an external service's start is given (runner/start-parts.ts). */
export interface ExternalServiceContext {
  test: RunOnService;
  group: ProcessGroup;
  /** The run's key prefix: whatever the run makes for itself is named under it. */
  keyPrefix: string;
  /** Records a fact in run.json (never a secret). */
  started: (what: string, info: unknown) => void;
}

/** A service of the user's, opened for a run. */
export interface OpenService {
  servers: PlacedServer[];
  /** What the clients need beyond addresses, if anything (an account, a table); it reaches the workers over IPC only. */
  service?: ServiceAccess;
  /** Removes what the run made there; the number of keys that went with it (called again, the same total, or with what came since). The process group's teardown removes it too. */
  remove(): Promise<number>;
}

/**
 * What a run made for itself on a service of the user's (a table, a schema),
 * removed once: by the run's close, which records how many keys went with it,
 * or by the process group's teardown, whichever comes first, so also when a
 * later step of the start fails or the run is interrupted. `removed` goes into
 * run.json once it is gone; a removal that fails says on stderr, in
 * `failed(why)`, what is left and how to remove it by hand.
 */
export function removedOnce(ctx: ExternalServiceContext, removed: [what: string, info: unknown], remove: () => Promise<number>, failed: (why: string) => string): () => Promise<number> {
  let removal: Promise<number> | null = null;
  const once = (): Promise<number> =>
    (removal ??= remove().then((n) => {
      ctx.started(...removed);
      return n;
    }));
  ctx.group.onStop(() =>
    once().then(
      () => {},
      (err: unknown) => void process.stderr.write(`fencecheck: ${failed(String((err as Error)?.message ?? err))}\n`),
    ),
  );
  return once;
}

/**
 * --deploy external for a service that needs more of the user than its
 * servers' addresses (an account and a table of the run's own; a session of the
 * runner's that marks the run alive).
 */
export interface ExternalService {
  /** Where its servers are found when --endpoints is not given; absent: --endpoints is needed. */
  serversFrom?: string;
  /** Before anything starts: what the run needs of the service, asked of it; BadInput naming what is missing. */
  check(test: RunOnService, warn: (line: string) => void): Promise<void>;
  /** At the start, once the key prefix is known: its servers placed, and what the run makes there for itself, removed at teardown whatever happens. */
  open(ctx: ExternalServiceContext): Promise<OpenService>;
}

/**
 * An option of a backend's own (--redis-persistence, --pg-pooler): refused
 * with another backend when given a value other than its default, and, with
 * `clients`, with another of this backend's clients.
 */
export interface BackendOption extends OptionSpec {
  /** Only these clients read it, and why the others do not. */
  clients?: { names: readonly string[]; why: string };
}

/** What a rule between options sees: the options as parsed, and the parts they name. */
export interface OptionsInPlay {
  options: Readonly<Record<string, OptionValue | undefined>>;
  backend: Backend;
  /** The --client as given (a shipped client's name, or an adapter's absolute path). */
  client: string;
  /** The shipped client's facts; absent for an adapter of the user's (its facts are known once preflight loads it). */
  clientKind?: ClientKind;
  nemeses: readonly string[];
  deploy: DeployName;
}

/** What one of a backend's own options needs installed when it has a value. */
export interface OptionNeed {
  requirement: Requirement;
  when(options: BackendOptions): boolean;
}

/** One rule between options: a name, and the message of the bad input it finds (undefined: none). */
export interface OptionRule {
  name: string;
  check(o: OptionsInPlay): string | undefined;
}

/** The version of one server program for run.json, asked of the program and kept while its file is unchanged. */
export interface VersionProbe {
  /** The file whose change means the answer may have changed; null: not installed. */
  file(): string | null;
  ask(): Promise<string | null>;
}

/**
 * A store the protected resource can keep its state in and decide in
 * (--resource NAME): a server of its own that the run starts locally, and the
 * module the resource process loads to decide there.
 */
export interface ResourceStore {
  /** What deciding there means, for --resource's help. */
  describe: string;
  /** Starts the store's server in the run's process group; what the decider is given (its address, its table). */
  start(ctx: { group: ProcessGroup; ports: PortPlan; runDir: string }): Promise<{ node: ServerNode; config: Record<string, unknown> }>;
  /** The decider's entry point (lib/paths.ts entryFile), whose `decider(config, fencing)` makes the resource's Decider. */
  decider: string;
  /** What its server needs installed. */
  needs: Requirement;
}

/** A shipped lock client's facts, which its backend declares; the options are checked against them before a run starts. */
export interface ClientKind {
  describe: string;
  /** The npm package whose lock it is, when it is one (its version is in run.json's versions); absent: fencecheck's own recipe, or an adapter program. */
  package?: string;
  /** Loads the client's module (and the library it wraps) and gives the function that makes one client. */
  load(): Promise<MakeClient>;
  /** False for a lock that issues no fencing tokens: with --fence on it takes them from --fence-source. */
  fences?: boolean;
  /** It makes a hold's fence from several servers' counters, as --fence-source says (max-incr when not given). */
  fenceFromMajority?: boolean;
  /** A reference adapter program: its manifest's path from the package's root (adapters/). */
  program?: string;
  /** The lock kinds it offers beyond the mutex, and whether it can cancel a wait (absent: a mutex that cannot). */
  kinds?: LockKinds;
  /** Its library tells its user things unasked (ctx.notice): its runs write format 2 histories. */
  notices?: boolean;
  /** Its logical clients in one worker can share one connection (--connections per-worker). */
  sharesConnection?: boolean;
  /** It can pause inside an acquire, between the servers' replies and its decision (--pause-at replies). */
  pausesBetweenReplies?: boolean;
  /** What it needs installed beyond its backend's servers (an adapter program's language and library). */
  needs?: Requirement;
}

export interface Backend {
  name: string;
  describe: string;
  /** Its shipped clients by --client name, with their facts. */
  clients: Readonly<Record<string, ClientKind>>;
  defaultClient: string;
  /** What its Cluster can do for a nemesis; the options refuse a nemesis that needs more. */
  abilities?: readonly ClusterAbility[];
  /** Why an ability is missing, for that refusal (e.g. etcd: Go reads time without libc). */
  lacks?: Partial<Record<ClusterAbility, string>>;
  /** Its members talk to each other, so that a partition can cut them apart (--partition-mode network cuts them off their container network). */
  members?: boolean;
  /**
   * The deployments (--deploy) its servers cannot run in, each with why, which
   * the refusal prints; every other deployment it runs in (local always).
   * test/runner/deployments.test.ts holds every backend to this: a refusal with
   * its reason, or a test that runs it there.
   */
  cannot?: Partial<Record<"docker" | "external", string>>;
  /** Toxics of our fault proxy it needs beyond Toxiproxy's, and what for (a --toxiproxy must have them). */
  needsToxics?: Record<string, string>;
  start(ctx: BackendContext): Promise<Cluster>;
  /** The programs its servers run, and the images of their containers where they have them. */
  programs: readonly ServerProgram[];
  /** Its servers' names, which an external cluster's endpoints take (--deploy external). */
  serverNames: readonly string[];
  /** --deploy external, where it takes more than addresses and removeKeys: the service's own check, start and removal. */
  external?: ExternalService;
  /** Delete the run's keys (its lock keys all start with `prefix`) from a cluster it shares; the number deleted. */
  removeKeys(nodes: readonly ServerNode[], prefix: string): Promise<number>;
  /** Options of its own, and the rules between options that only it has. */
  options?: readonly BackendOption[];
  rules?: readonly OptionRule[];
  /**
   * What it needs installed: its local servers' programs (a run on --deploy
   * docker or external needs none of them), and what some of its own options
   * need besides (--pg-pooler pgbouncer), which `fencecheck setup --extras` names.
   */
  needs?: { servers: Requirement; options?: readonly OptionNeed[] };
  /** Its server programs' versions, by the name run.json gives them. */
  versions?: Readonly<Record<string, VersionProbe>>;
  /** The npm packages its clients are built on, whose versions run.json records. */
  packages?: readonly string[];
  /** The key of run.json's versions that names its server's version (default: the first of `versions`). */
  serverVersion?: string;
  /** A store for the protected resource (--resource NAME, with any backend). */
  resourceStore?: ResourceStore;
  /** Fence counters on its servers for clients whose lock issues none (--fence-source), loaded when a run needs them. */
  fenceCounter?: () => Promise<FenceCounter>;
  /** Its rows of the failure catalogue (fencecheck scenario). */
  scenarios?: readonly Scenario[];
}
