// What each part of fencecheck needs from the machine, as data: the Debian
// packages that provide it and how to tell it is already there. A run asks for
// the parts it uses (requirementsOf), so a first run of the default Redis test
// installs Redis and nothing else; `fencecheck setup` asks for the parts named.
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { findLibfaketime } from "../cluster/faketime.ts";
import { ZK_CLASSPATH, etcdBinary, findProgram, javaBinary, pgBin, pgbouncerBinary, redisBinary } from "../cluster/programs.ts";

export const REQUIREMENT_IDS = ["redis", "etcd", "zookeeper", "postgres", "pgbouncer", "dynalite", "clock", "docker", "gnu-time", "chromium", "redis-py", "kazoo", "python-etcd3", "curator"] as const;
export type RequirementId = (typeof REQUIREMENT_IDS)[number];

export interface Requirement {
  id: RequirementId;
  /** What it serves, for the lines set-up prints. */
  serves: string;
  /** Debian's packages that provide it; empty for docker, which its own script sets up, and for what npm installs. */
  packages: readonly string[];
  /** For a part no Debian package provides: how to get it, said when it is missing. */
  getIt?: string;
  /** Whether the machine has it. */
  present(): boolean;
  /**
   * The variables by which a user names the program to run instead (another
   * Postgres, a redis-server of their own build). With one set the part counts as
   * present: nothing of Debian's would be run, and a program that is not there
   * fails the run's start naming it.
   */
  chosenBy?: readonly string[];
  /**
   * Whether a failure to install it may be only a warning when it was not asked
   * for by name (Ubuntu's apt has no postgresql-15; a machine may have no engine).
   */
  optional?: boolean;
}

/** A program by name on PATH, or a path to an executable file. */
export const onPath = (program: string): boolean => findProgram(program) !== null;

/** Where Debian's python3-* packages put their modules. */
const DIST_PACKAGES = "/usr/lib/python3/dist-packages";
const pythonModule = (name: string): boolean => onPath("python3") && existsSync(join(DIST_PACKAGES, name, "__init__.py"));

/** The reference adapter programs' languages and libraries (adapters/), each installed only when a run uses that client. */
const ADAPTER_REQUIREMENTS: Record<"redis-py" | "kazoo" | "python-etcd3" | "curator", Requirement> = {
  "redis-py": { id: "redis-py", serves: "--client redis-py and redis-py-timeout-0", packages: ["python3", "python3-redis"], present: () => pythonModule("redis") },
  kazoo: { id: "kazoo", serves: "--client kazoo", packages: ["python3", "python3-kazoo"], present: () => pythonModule("kazoo") },
  "python-etcd3": { id: "python-etcd3", serves: "--client python-etcd3 and python-etcd3-with", packages: ["python3", "python3-etcd3"], present: () => pythonModule("etcd3") },
  // The adapter is compiled once (javac) into the cache; Curator's recipes bring its framework, ZooKeeper's client, Guava and slf4j.
  curator: {
    id: "curator",
    serves: "--client curator",
    packages: ["default-jdk-headless", "libcurator-recipes-java"],
    present: () => existsSync("/usr/share/java/curator-recipes.jar") && existsSync("/usr/share/java/slf4j-simple.jar") && onPath("javac"),
  },
};

export const REQUIREMENTS: Record<RequirementId, Requirement> = {
  redis: { id: "redis", serves: "--backend redis and redlock", packages: ["redis-server"], present: () => onPath(redisBinary()), chosenBy: ["FENCECHECK_REDIS_SERVER"] },
  etcd: { id: "etcd", serves: "--backend etcd", packages: ["etcd-server"], present: () => onPath(etcdBinary()), chosenBy: ["FENCECHECK_ETCD"] },
  zookeeper: {
    id: "zookeeper",
    serves: "--backend zookeeper",
    // The package puts its jar in /usr/share/java and nothing on PATH; the JVM is its own package.
    packages: ["zookeeper", "default-jre-headless"],
    present: () => existsSync(ZK_CLASSPATH[1]) && onPath(javaBinary()),
  },
  postgres: { id: "postgres", serves: "--backend postgres and --resource postgres", packages: ["postgresql-15"], present: () => onPath(pgBin("postgres")), chosenBy: ["FENCECHECK_PG_BIN"], optional: true },
  // dynalite is fencecheck's optional npm dependency (its LevelDB binding is native): npm installs it, apt cannot.
  dynalite: {
    id: "dynalite",
    serves: "--backend dynamodb and --resource dynamodb",
    packages: [],
    present: () => resolvable("dynalite/cli.js"),
    getIt: "it is an optional npm dependency of fencecheck: run `npm install` where fencecheck is installed, without --omit=optional",
  },
  pgbouncer: { id: "pgbouncer", serves: "--pg-pooler pgbouncer", packages: ["pgbouncer"], present: () => onPath(pgbouncerBinary()), chosenBy: ["FENCECHECK_PGBOUNCER"], optional: true },
  // The shim that lets libfaketime run inside Debian's redis-server is built from
  // source, hence the compiler (setup/shim.ts builds it once into the cache).
  clock: { id: "clock", serves: "--nemesis clock on local servers, or on the clients' workers with --clock-target clients", packages: ["faketime", "gcc", "libc6-dev"], present: () => findLibfaketime() !== null && onPath("gcc") && existsSync("/usr/include/stdio.h") },
  docker: { id: "docker", serves: "--deploy docker and the compose lab", packages: [], present: () => false, optional: true },
  "gnu-time": { id: "gnu-time", serves: "npm run bench:checker (peak memory of each process)", packages: ["time"], present: () => existsSync("/usr/bin/time") },
  // Only for the docs' pictures (scripts/screenshots.ts): never among what `fencecheck setup` installs unasked.
  chromium: { id: "chromium", serves: "npm run docs:images (headless screenshots for docs/images/)", packages: ["chromium"], present: () => onPath(chromiumBinary()), chosenBy: ["FENCECHECK_CHROMIUM"] },
  ...ADAPTER_REQUIREMENTS,
};


/** Which requirement each reference adapter program has, by its --client name. */
export const CLIENT_NEEDS: Record<string, RequirementId> = {
  "redis-py": "redis-py",
  "redis-py-timeout-0": "redis-py",
  kazoo: "kazoo",
  "python-etcd3": "python-etcd3",
  "python-etcd3-with": "python-etcd3",
  curator: "curator",
};

/** The browser scripts/screenshots.ts runs: FENCECHECK_CHROMIUM, or Debian's chromium. */
export const chromiumBinary = (): string => process.env.FENCECHECK_CHROMIUM || "chromium";

/** Which requirement each backend's local servers have (none: ours, lockserver, runs on the Node that runs fencecheck). */
export const BACKEND_NEEDS: Partial<Record<string, RequirementId>> = {
  redis: "redis",
  redlock: "redis",
  etcd: "etcd",
  zookeeper: "zookeeper",
  postgres: "postgres",
  dynamodb: "dynalite",
};

/** Whether the part is there, or the user named a program of their own for it. */
export function satisfied(r: Requirement, env: NodeJS.ProcessEnv = process.env): boolean {
  return (r.chosenBy ?? []).some((v) => env[v]) || r.present();
}

/** Whether a module of ours resolves (an optional npm dependency may not be installed). */
function resolvable(specifier: string): boolean {
  try {
    createRequire(import.meta.url).resolve(specifier);
    return true;
  } catch {
    return false;
  }
}
