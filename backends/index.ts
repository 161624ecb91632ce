// The backends fencecheck tests, each a lock service in a folder of its own
// (backends/NAME/, declared by its index.ts as `backend`: core/backend.ts says
// what it declares), and what the rest of fencecheck finds in them by name: a --backend,
// a --client, a --resource store, the options they add, what they need
// installed, the versions run.json records. Adding a backend is a folder and a
// line in BACKENDS. Declaring loads no client library: each client's module is
// loaded when a client of that kind is first made.
import type { Backend, BackendOption, ClientKind, ResourceStore, Scenario, VersionProbe } from "../core/index.ts";
import type { ClientContext, LockClient } from "../clients/index.ts";
import type { Requirement } from "../setup/index.ts";
import type { ImageSource } from "../cluster/deployment.ts";
import { backend as redis } from "./redis/index.ts";
import { backend as redlock } from "./redlock/index.ts";
import { backend as etcd } from "./etcd/index.ts";
import { backend as zookeeper } from "./zookeeper/index.ts";
import { backend as postgres } from "./postgres/index.ts";
import { backend as mariadb } from "./mariadb/index.ts";
import { backend as dynamodb } from "./dynamodb/index.ts";
import { backend as lockserver } from "./lockserver/index.ts";
import { backend as hazelcast } from "./hazelcast/index.ts";

/** The first is the default --backend. */
export const BACKENDS = { redis, redlock, etcd, zookeeper, postgres, mariadb, dynamodb, lockserver, hazelcast } as const satisfies Record<string, Backend>;

export type BackendName = keyof typeof BACKENDS;
export const BACKEND_NAMES = Object.keys(BACKENDS) as BackendName[];

/** The backend of that name, if there is one. */
export const backendNamed = (name: string): Backend | undefined => (Object.hasOwn(BACKENDS, name) ? (BACKENDS as Record<string, Backend>)[name] : undefined);

const all: readonly Backend[] = Object.values(BACKENDS);

/** Every shipped client by its --client name (names are unique across backends: test/backends/registry.test.ts). */
export const CLIENTS: Readonly<Record<string, ClientKind>> = Object.fromEntries(all.flatMap((b) => Object.entries(b.clients)));

/** The backend whose client this is. */
export const backendOfClient = (client: string): Backend | undefined => all.find((b) => Object.hasOwn(b.clients, client));

/** One client of the kind named, its module loaded first. */
export async function createClient(name: string, ctx: ClientContext): Promise<LockClient> {
  const kind = CLIENTS[name];
  if (!kind) throw new Error(`no lock client named ${JSON.stringify(name)}`);
  return (await kind.load())(ctx);
}

type StoreOf<B> = B extends { resourceStore: ResourceStore } ? B : never;
/** The backends whose server can hold the protected resource's state (--resource NAME). */
export type StoreName = { [K in BackendName]: (typeof BACKENDS)[K] extends StoreOf<(typeof BACKENDS)[K]> ? K : never }[BackendName];
export const RESOURCE_STORES = Object.fromEntries(all.flatMap((b) => (b.resourceStore ? [[b.name, b.resourceStore]] : []))) as Readonly<Record<StoreName, ResourceStore>>;
export const STORE_NAMES = Object.keys(RESOURCE_STORES) as StoreName[];

/** The backends' own options, each once (Redis' and Redlock's servers share --redis-persistence), in the registry's order. */
type OptionsOf<B> = B extends { options: readonly (infer O)[] } ? O : never;
export type BackendOptionSpec = OptionsOf<(typeof BACKENDS)[BackendName]>;
export const BACKEND_OPTIONS = [...new Set(all.flatMap((b) => b.options ?? []))] as readonly BackendOptionSpec[];

/** The backends that declare an option of their own. */
export const ownersOf = (option: string): Backend[] => all.filter((b) => (b.options ?? []).some((o: BackendOption) => o.name === option));

/** The images of every backend's server programs that have a container, each once. */
export const IMAGES: readonly ImageSource[] = [...new Map(all.flatMap((b) => b.programs.flatMap((p) => (p.container ? [[p.container.image.name, p.container.image] as const] : [])))).values()];

/** Every backend's servers' well-known ports, which a run never takes (cluster/ports.ts). */
export const WELL_KNOWN_PORTS: ReadonlySet<number> = new Set(all.flatMap((b) => b.programs.flatMap((p) => p.defaultPorts ?? [])));

/** Every backend's server programs' version probes, by the name run.json gives them, each once. */
export const VERSION_PROBES: Readonly<Record<string, VersionProbe>> = Object.assign({}, ...all.map((b) => b.versions ?? {}));

/** The npm packages the shipped clients are built on, each once. */
export const PACKAGES: readonly string[] = [...new Set(all.flatMap((b) => b.packages ?? []))];

/** The backends' rows of the failure catalogue, in the registry's order. */
export const BACKEND_SCENARIOS: readonly Scenario[] = all.flatMap((b) => b.scenarios ?? []);

/**
 * What every backend needs installed, each part once: its servers', what its
 * options need (`fencecheck setup --extras`), and its clients' (the reference
 * adapter programs' languages and libraries: `fencecheck setup --adapters`).
 */
const once = (rs: Requirement[]): Requirement[] => [...new Map(rs.map((r) => [r.id, r])).values()];
export const SERVER_NEEDS: Readonly<Record<string, Requirement>> = Object.fromEntries(all.flatMap((b) => (b.needs ? [[b.name, b.needs.servers]] : [])));
export const OPTION_NEEDS: readonly Requirement[] = once(all.flatMap((b) => (b.needs?.options ?? []).map((n) => n.requirement)));
export const CLIENT_NEEDS: readonly Requirement[] = once(Object.values(CLIENTS).flatMap((c) => (c.needs ? [c.needs] : [])));
