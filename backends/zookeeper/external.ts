// --backend zookeeper --deploy external: a run on a ZooKeeper ensemble of the
// user's, which others may be using at the same time.
//
// Where the run's nodes are. Every ZooKeeper client the backend lists keeps a
// lock's nodes at ZK_LOCK_ROOT/<key> and below: fencecheck's own four
// (backends/zookeeper/client.ts: the key's node and its sequential children), kazoo
// (the same; its Semaphore also the sibling <key>-__lock__) and Curator (the
// same; a semaphore's <key>/leases and <key>/locks). Every key starts with the
// run's key prefix (runner/start-parts.ts). So the run's nodes are the children of
// /fencecheck/locks whose names start with the prefix, with everything under
// them, and /fencecheck and /fencecheck/locks themselves where this run made
// them. That is the "chroot" of the issue without a chroot: a real one (a path
// after the connect string) would have to reach every client, an adapter
// program of the user's included, through the adapter protocol, where the
// prefix already reaches them all as part of the key.
//
// At the end (the process group's teardown, so also after a failure or Ctrl-C)
// every such node is deleted, deepest first, ephemeral ones of sessions still
// alive included (a zookeeper-naive ghost, the node of a client that crashed);
// then the parents, if a run made them (a run writes PARENT_DATA into those it
// makes, so a crashed run's are known too) and nothing is left in them.
// ZooKeeper refuses to delete a node with children, so a parent another run is
// using stays; a /fencecheck of someone else's (other data) is never touched.
//
// A runner that is SIGKILLed never gets there. Its ephemeral nodes go when
// their sessions expire, but each key's persistent node would stay for ever. So
// a run holds a marker, the ephemeral node <prefix>~run of a session of the
// runner's own, and at its start sweeps the nodes of every run named with the
// default prefix fencecheck:<id>: whose marker is gone: each persistent node of
// theirs with nothing under it, deepest first. An ephemeral node is never swept:
// it goes with its session, and its parent with a later run's sweep. Not
// ZooKeeper's CONTAINER nodes, which the server deletes once empty:
// node-zookeeper-client 1.1.3 and kazoo 2.8 cannot create them, and a
// container the server deleted between two holds would leave the shipped
// client, which makes a key's node once, creating into nothing.
import { hostname } from "node:os";
import zookeeper from "node-zookeeper-client";
import { BadInput, sleep } from "../../lib/index.ts";
import { ZK_LOCK_ROOT } from "./places.ts";
import { ZkCallError, ZkSession, catchUp, isZk } from "./session.ts";
import type { Endpoint } from "../../clients/index.ts";
import { placeServers } from "../../cluster/external-proxies.ts";
import type { ExternalServiceContext, OpenService } from "../../core/index.ts";
import type { RunOnService } from "../../core/index.ts";

const { CreateMode } = zookeeper;

const WHAT = "--backend zookeeper --deploy external";
/**
 * The marker's session timeout (the server clamps it to its own bounds): how
 * long after its runner died a run counts as crashed. Long enough that a runner
 * merely slow to reach the ensemble keeps its marker.
 */
const MARKER_SESSION_MS = 10_000;
/** Each request of the run's own: the marker, the sweep, the deletion. */
const ADMIN_TIMEOUT_MS = 5_000;
/** The marker's name after the prefix; no lock key ends so (keys are k<N>). */
export const MARKER = "~run";
/** The default prefix (runner/start-parts.ts): only runs named so are swept after a crash. */
const RUN_PREFIX = /^(fencecheck:[^:/]+:)/;
/** What a run writes into the parents it makes: whoever finds them empty later may delete them. */
const PARENT_DATA = Buffer.from("made by a fencecheck run; deleted by the run that finds it empty");
/** /fencecheck, /fencecheck/locks: made by the first run that needs them. */
const PARENTS = ZK_LOCK_ROOT.split("/")
  .slice(1)
  .map((_, i, parts) => "/" + parts.slice(0, i + 1).join("/"));

/** ZooKeeper's PathUtils refuses these in a node's name (and "/" separates names). */
const REFUSED = /[\u0000-\u001f\u007f-\u009f\ud800-\uf8ff\ufff0-\uffff/]/;

const children = (s: ZkSession, path: string): Promise<string[]> =>
  s.call<string[]>((done) => s.client.getChildren(path, done)).catch((err: unknown) => {
    if (isZk(err, "NO_NODE")) return [];
    throw err;
  });

/**
 * The lock root's children, as the ensemble has them now (catchUp first): a
 * fresh-clone run of 2026-11-30 listed the root from a server that had not yet
 * applied a node made a moment before through another, and left that node.
 */
async function rootChildren(s: ZkSession): Promise<string[]> {
  await s.call<void>((done) => catchUp(s.client, ZK_LOCK_ROOT, (err) => done(err, undefined)));
  return children(s, ZK_LOCK_ROOT);
}

/** Delete one node whatever its version; false when it was not there. */
const removeNode = (s: ZkSession, path: string): Promise<boolean> =>
  s.call<void>((done) => s.client.remove(path, -1, (err) => done(err, undefined))).then(
    () => true,
    (err: unknown) => {
      if (isZk(err, "NO_NODE")) return false;
      throw err;
    },
  );

/** A parent's data, or null when it is not there. */
const parentData = (s: ZkSession, path: string): Promise<Buffer | null> =>
  s.call<Buffer>((done) => s.client.getData(path, (err, data) => done(err, data))).catch((err: unknown) => {
    if (isZk(err, "NO_NODE")) return null;
    throw err;
  });

/** Make a node of `mode`; false when it was there already (someone else's). */
const createNode = (s: ZkSession, path: string, data: Buffer, mode: number): Promise<boolean> =>
  s.call<string>((done) => s.client.create(path, data, mode, done)).then(
    () => true,
    (err: unknown) => {
      if (isZk(err, "NODE_EXISTS")) return false;
      throw err;
    },
  );

/**
 * Delete `path` and everything under it, deepest first; the number of nodes
 * deleted. A child made meanwhile (a client of the run still at work) makes
 * ZooKeeper refuse with NotEmpty: the children are listed again, a few times.
 * `spareEphemeral` (the sweep): an ephemeral node, and so every node above it,
 * is left to its session.
 */
async function deleteTree(s: ZkSession, path: string, spareEphemeral: boolean): Promise<number> {
  if (spareEphemeral) {
    const stat = await s.exists(path);
    if (!stat || stat.ephemeralOwner.some((b) => b !== 0)) return 0;
  }
  let deleted = 0;
  for (let round = 1; ; round++) {
    for (const c of await children(s, path)) deleted += await deleteTree(s, `${path}/${c}`, spareEphemeral);
    try {
      return deleted + ((await removeNode(s, path)) ? 1 : 0);
    } catch (err) {
      if (!isZk(err, "NOT_EMPTY")) throw err;
      // Something under it still: a live session's ephemeral node (which the sweep leaves), or a node made since the listing.
      if (spareEphemeral) return deleted;
      if (round >= 3) throw new Error(`${path} kept getting new children while it was being deleted`);
    }
  }
}

/** The prefixes of the runs whose markers are among `names`. */
const liveRuns = (names: readonly string[]): string[] => names.filter((n) => n.endsWith(MARKER)).map((n) => n.slice(0, -MARKER.length));

/**
 * Delete every node of the run's: the children of the lock root named under
 * `prefix` (but `except`), with what is under them; how many went. A name under
 * the longer prefix of another live run (a run of --key-prefix fc beside one of
 * fencecheck:<id>:) is that run's, its marker included.
 */
async function deleteRunNodes(s: ZkSession, prefix: string, except?: string): Promise<number> {
  if (prefix === "") throw new Error("refusing to delete every lock node: the run has no key prefix");
  const names = await rootChildren(s);
  const others = liveRuns(names).filter((p) => p !== prefix && p.startsWith(prefix));
  let deleted = 0;
  for (const name of names)
    if (name.startsWith(prefix) && name !== except && !others.some((p) => name.startsWith(p))) deleted += await deleteTree(s, `${ZK_LOCK_ROOT}/${name}`, false);
  return deleted;
}

/**
 * The leftovers of crashed runs: every persistent node with nothing under it of
 * a run with the default prefix whose marker is gone. A name under a live
 * marker's prefix (the run's own included) is never one, whatever its form.
 */
async function sweep(s: ZkSession, own: string): Promise<{ runs: string[]; nodes: number }> {
  const names = await rootChildren(s);
  const alive = [own, ...liveRuns(names)];
  const runs = new Set<string>();
  let nodes = 0;
  for (const name of names) {
    const run = RUN_PREFIX.exec(name)?.[1];
    if (!run || alive.some((p) => name.startsWith(p))) continue;
    runs.add(run);
    nodes += await deleteTree(s, `${ZK_LOCK_ROOT}/${name}`, true);
  }
  return { runs: [...runs], nodes };
}

/** `f` again after a lost connection or a session that ended (a member restarted at the final heal); each pass is idempotent. */
async function retrying<T>(f: () => Promise<T>, tries = 3): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await f();
    } catch (err) {
      if (!(err instanceof ZkCallError) || i >= tries) throw err;
      await sleep(500);
    }
  }
}

const openSession = (servers: readonly Endpoint[]): Promise<ZkSession> => ZkSession.open([...servers], MARKER_SESSION_MS, ADMIN_TIMEOUT_MS);

/** The registry's removeKeys: every node of the run's under `prefix`, its marker included, deleted. */
export async function removeZkKeys(servers: readonly Endpoint[], prefix: string): Promise<number> {
  const s = await openSession(servers);
  try {
    return await retrying(() => deleteRunNodes(s, prefix));
  } finally {
    s.close();
  }
}

/**
 * The runner's session and the marker it holds. A session that expires (the
 * runner cut off from the ensemble for longer than its timeout) is opened again
 * and the marker made again at once: without it, another run's start would take
 * this one for crashed and sweep its empty nodes.
 */
class MarkerSession {
  private current: ZkSession | null = null;
  private opening: Promise<ZkSession> | null = null;
  private marked = false;
  private closed = false;
  private readonly keeper: NodeJS.Timeout;

  constructor(
    private readonly servers: readonly Endpoint[],
    readonly path: string,
  ) {
    this.keeper = setInterval(() => void this.session().catch(() => {}), 1000);
    this.keeper.unref();
  }

  /** A live session: the current one, or a new one holding the marker again. */
  session(): Promise<ZkSession> {
    if (this.closed) return Promise.reject(new Error("the run's ZooKeeper session is closed"));
    if (this.current?.alive) return Promise.resolve(this.current);
    return (this.opening ??= this.reopen().finally(() => (this.opening = null)));
  }

  /** Make the marker; false when it is there already: another run's, of the same prefix. */
  async mark(): Promise<boolean> {
    this.marked = await this.create(await this.session());
    return this.marked;
  }

  /** The marker deleted (the run is over); the session stays open for what is left to do. */
  async unmark(): Promise<void> {
    clearInterval(this.keeper);
    const s = await this.session();
    if (this.marked) await removeNode(s, this.path);
    this.marked = false;
  }

  close(): void {
    clearInterval(this.keeper);
    this.closed = true;
    this.current?.close();
  }

  private async reopen(): Promise<ZkSession> {
    this.current?.close();
    const s = await openSession(this.servers);
    // Closed while it was opening (the teardown): the new session must not outlive it.
    if (this.closed) {
      s.close();
      throw new Error("the run's ZooKeeper session is closed");
    }
    this.current = s;
    if (this.marked && !(await this.create(this.current)))
      process.stderr.write(`fencecheck: the run's marker ${this.path} was lost with its session, and another session has made it since: another run with this key prefix?\n`);
    return this.current;
  }

  private create(s: ZkSession): Promise<boolean> {
    const about = JSON.stringify({ host: hostname(), pid: process.pid, since: new Date().toISOString() });
    return createNode(s, this.path, Buffer.from(about), CreateMode.EPHEMERAL);
  }
}

/**
 * Before anything starts: a --key-prefix that can begin a node's name, the
 * ensemble answering, and with --key-prefix no node of that prefix there yet
 * (a live run's marker, or nodes of someone's that the run would delete).
 */
export async function checkZkEnsemble(test: RunOnService, warn: (line: string) => void): Promise<void> {
  const given = test.workloadOptions.keyPrefix;
  if (given === "")
    throw new BadInput(`${WHAT}: --key-prefix '' would put the run's nodes among everyone's under ${ZK_LOCK_ROOT}, where its end could not tell them apart; give a prefix, or leave it out (fencecheck:<run>:)`);
  const bad = given === undefined ? null : REFUSED.exec(given);
  if (bad)
    throw new BadInput(`${WHAT}: --key-prefix ${JSON.stringify(given)} has ${JSON.stringify(bad[0])}, which a ZooKeeper node's name cannot hold (the run's nodes are children of ${ZK_LOCK_ROOT} named <prefix>k0, ...)`);
  const servers = await placeServers(test.toxiproxy, test.serverOptions.external ?? []);
  let s: ZkSession;
  const ttlMs = test.workloadOptions.ttlMs;
  try {
    // Asked for the clients' session timeout, to learn what the ensemble grants them.
    s = await ZkSession.open(servers, ttlMs, ADMIN_TIMEOUT_MS);
  } catch (err) {
    throw new BadInput(`${WHAT}: no ZooKeeper server of ${servers.map((x) => `${x.name} (${x.host}:${x.port})`).join(", ")} took a session (${(err as Error).message})`);
  }
  try {
    if (s.timeoutMs !== ttlMs)
      warn(`${WHAT}: the ensemble grants a session of ${s.timeoutMs} ms where --ttl asks ${ttlMs} (its minSessionTimeout and maxSessionTimeout): the lock clients' holds last that long (ttl_ms in each acquire's ok)`);
    if (given === undefined) return;
    const names = await rootChildren(s);
    if (names.includes(given + MARKER))
      throw new BadInput(`${WHAT}: --key-prefix ${JSON.stringify(given)} is taken: ${ZK_LOCK_ROOT}/${given}${MARKER} says a run with it is going on; choose another prefix`);
    const there = names.filter((n) => n.startsWith(given));
    if (there.length) {
      const at = `${servers[0].host}:${servers[0].port}`;
      throw new BadInput(
        `${WHAT}: ${there.length} node${there.length === 1 ? "" : "s"} under ${ZK_LOCK_ROOT} already start${there.length === 1 ? "s" : ""} with --key-prefix ${JSON.stringify(given)} (${there.slice(0, 3).join(", ")}${there.length > 3 ? ", ..." : ""}), ` +
          `which the run would take for its own and delete at its end; choose another prefix, or, if they are a crashed run's, delete them: ${there.map((n) => `zkCli.sh -server ${at} deleteall '${ZK_LOCK_ROOT}/${n}'`).slice(0, 3).join("; ")}`,
      );
    }
  } finally {
    s.close();
  }
}

/**
 * At the run's start: the parents made where missing (remembered as the run's),
 * the marker made, crashed runs' leftovers swept, and the deletion of the run's
 * nodes handed to the process group's teardown, which runs it once the run's
 * processes are gone (none can make a node after it). remove() is an earlier
 * pass, while the workers may still be there; each returns the total so far.
 */
export async function openZkEnsemble(ctx: ExternalServiceContext): Promise<OpenService> {
  const servers = await placeServers(ctx.test.toxiproxy, ctx.test.serverOptions.external ?? []);
  const prefix = ctx.keyPrefix;
  const marker = new MarkerSession(servers, `${ZK_LOCK_ROOT}/${prefix}${MARKER}`);
  const made: string[] = [];
  let owned = false;
  let removed = 0;
  // Nothing of a prefix whose marker is another run's is this run's to delete.
  const remove = async (): Promise<number> => {
    if (owned) removed += await retrying(async () => deleteRunNodes(await marker.session(), prefix, prefix + MARKER));
    return removed;
  };
  ctx.group.onStop(async () => {
    // A start that never reached the ensemble made nothing there.
    if (!owned && made.length === 0) return marker.close();
    try {
      ctx.started("keys_removed", await remove());
      await marker.unmark();
      const s = await marker.session();
      // This run's, or a crashed run's that made them before (their data says so).
      for (const parent of [...PARENTS].reverse()) {
        if (!made.includes(parent) && !PARENT_DATA.equals((await parentData(s, parent)) ?? Buffer.alloc(0))) continue;
        await removeNode(s, parent).catch((err: unknown) => {
          // Another run's nodes are in it: that run is using it, and it stays.
          if (!isZk(err, "NOT_EMPTY")) throw err;
        });
      }
    } catch (err) {
      const at = `${servers[0].host}:${servers[0].port}`;
      process.stderr.write(
        `fencecheck: could not delete the run's ZooKeeper nodes (${ZK_LOCK_ROOT}/${prefix}*${made.length ? ` and ${made.join(", ")}` : ""}): ${(err as Error)?.message ?? err}\n` +
          `  list them with zkCli.sh -server ${at} ls ${ZK_LOCK_ROOT}, and delete each with deleteall\n`,
      );
    } finally {
      marker.close();
    }
  });
  const s = await marker.session();
  try {
    // A run ending meanwhile may delete a parent it found empty: made again, and the marker again.
    for (let tries = 1; ; tries++) {
      for (const parent of PARENTS) if ((await createNode(s, parent, PARENT_DATA, CreateMode.PERSISTENT)) && !made.includes(parent)) made.push(parent);
      try {
        if (await marker.mark()) break;
      } catch (err) {
        if (isZk(err, "NO_NODE") && tries < 3) continue;
        throw err;
      }
      throw new Error(`${marker.path} is there already: another run with the key prefix ${prefix} is going on, and this one leaves its nodes alone`);
    }
  } catch (err) {
    if (!isZk(err, "NO_AUTH")) throw err;
    throw new Error(`the ensemble's ACLs do not let an unauthenticated client create nodes under ${ZK_LOCK_ROOT} (NoAuth), which the run and its lock clients need: ${String(err)}`);
  }
  owned = true;
  const swept = await sweep(s, prefix);
  ctx.started("zookeeper_run", { marker: marker.path, parents_made: made, swept });
  return { servers, remove };
}
