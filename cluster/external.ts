// Someone else's cluster (--deploy external): fencecheck starts no server, and
// can do to one only what the user gave it a command for. Pausing a server takes
// a pause and a resume command, killing it a kill and a restart command; each
// runs under sh with the server's name, host and port in its environment, and
// must exit 0. Clocks cannot be moved from here.
import { spawn } from "node:child_process";
import type { Cluster } from "./cluster.ts";
import { BadInput, parseHostPort } from "../lib/index.ts";

/** What one server of the user's control commands may do to it. */
export type ControlVerb = "pause" | "resume" | "kill" | "restart";

/** Where fencecheck itself reaches a server (to delete the run's keys; the control commands get it too). */
export interface ServerAddress {
  host: string;
  port: number;
}

export interface ExternalServer extends Partial<ServerAddress> {
  name: string;
  /**
   * A proxy of the user's, already in place on their Toxiproxy, whose upstream is
   * this server: the workers connect through it instead of proxies of the run's own.
   * Without host and port the server is reached only through it.
   */
  proxy?: string;
  control?: Partial<Record<ControlVerb, string>>;
}

/** A server with the address the run reaches it at (cluster/external-proxies.ts fills it in from its proxy where none was given). */
export type PlacedServer = ExternalServer & ServerAddress;

/** What --endpoints gives: the servers, and the Toxiproxy a JSON file names for them (null: none named). */
export interface Endpoints {
  servers: ExternalServer[];
  toxiproxy: string | null;
}

function runControl(server: PlacedServer, verb: ControlVerb, timeoutMs: number): Promise<void> {
  const command = server.control?.[verb];
  if (!command) return Promise.reject(new Error(`no ${verb} command for ${server.name}`));
  return new Promise((resolve, reject) => {
    const child = spawn("sh", ["-c", command], {
      stdio: ["ignore", "ignore", "pipe"],
      env: { ...process.env, FENCECHECK_SERVER: server.name, FENCECHECK_HOST: server.host, FENCECHECK_PORT: String(server.port) },
    });
    let err = "";
    child.stderr.on("data", (d) => (err += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.once("error", (e) => reject(new Error(`${verb} command for ${server.name} did not start: ${e.message}`)));
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve();
      else reject(new Error(`${verb} command for ${server.name} (${command}) ended with ${signal ?? `exit ${code}`}: ${err.trim().slice(0, 300)}`));
    });
  });
}

/** Which controls a nemesis needs on every server. */
export const CONTROLS_NEEDED: Record<string, ControlVerb[]> = { "pause-server": ["pause", "resume"], kill: ["kill", "restart"] };

export function externalCluster(servers: PlacedServer[], timeoutMs = 10_000): Cluster {
  const down = new Set<string>();
  const paused = new Set<string>();
  const server = (name: string): PlacedServer => {
    const s = servers.find((x) => x.name === name);
    if (!s) throw new Error(`no server named ${name} (servers: ${servers.map((x) => x.name).join(", ")})`);
    return s;
  };
  return {
    nodes: servers.map(({ name, host, port }) => ({ name, host, port })),
    running: (name) => !down.has(name),
    async pause(name) {
      if (down.has(name)) return false;
      await runControl(server(name), "pause", timeoutMs);
      paused.add(name);
      return true;
    },
    async resume(name) {
      if (!paused.has(name)) return false;
      await runControl(server(name), "resume", timeoutMs);
      paused.delete(name);
      return true;
    },
    async kill(name) {
      await runControl(server(name), "kill", timeoutMs);
      down.add(name);
    },
    async restart(name) {
      if (!down.has(name)) return;
      await runControl(server(name), "restart", timeoutMs);
      down.delete(name);
    },
  };
}

/**
 * --endpoints: "host:port,..." or "name=host:port,..." (named by the backend's
 * own names otherwise: redis-1, etcd-2), or the path of a JSON file
 * {"toxiproxy": URL, "servers": [{"name", "host", "port", "proxy", "control": {"pause", "resume", "kill", "restart"}}]}.
 * The count must be the backend's; BadInput names what is wrong and where.
 */
export function parseEndpoints(value: string, names: readonly string[], readFile: (path: string) => string): Endpoints {
  const where = `--endpoints ${value}`;
  let servers: ExternalServer[];
  let toxiproxy: string | null = null;
  if (value.endsWith(".json")) {
    let raw: unknown;
    try {
      raw = JSON.parse(readFile(value));
    } catch (err) {
      throw new BadInput(`${where}: ${(err as NodeJS.ErrnoException).code === "ENOENT" ? "no such file" : `not JSON (${(err as Error).message})`}`);
    }
    const file = raw as { servers?: unknown; toxiproxy?: unknown };
    const list = file?.servers;
    if (!Array.isArray(list)) throw new BadInput(`${where}: expected {"servers": [...]}`);
    if (file.toxiproxy !== undefined) toxiproxy = toxiproxyUrl(file.toxiproxy, `${where}: "toxiproxy"`);
    servers = list.map((s: unknown, i) => serverOf(s, i, names, `${where}: servers[${i}]`));
  } else {
    servers = value.split(",").map((item, i) => {
      const eq = item.indexOf("=");
      const [name, address] = eq < 0 ? [names[i] ?? `server-${i + 1}`, item] : [item.slice(0, eq), item.slice(eq + 1)];
      const at = parseHostPort(address);
      if (!at) throw new BadInput(`${where}: ${JSON.stringify(item)} is not host:port or name=host:port`);
      return { name: name.trim(), ...at };
    });
  }
  if (servers.length !== names.length)
    throw new BadInput(`${where}: this backend has ${names.length} server${names.length === 1 ? "" : "s"} (${names.join(", ")}), and ${servers.length} ${servers.length === 1 ? "was" : "were"} given`);
  const unknown = servers.find((s) => !names.includes(s.name));
  if (unknown) throw new BadInput(`${where}: ${JSON.stringify(unknown.name)} is not a server of this backend (${names.join(", ")})`);
  if (new Set(servers.map((s) => s.name)).size !== servers.length) throw new BadInput(`${where}: a server is named twice`);
  const proxies = servers.flatMap((s) => (s.proxy ? [s.proxy] : []));
  const twice = proxies.find((p, i) => proxies.indexOf(p) !== i);
  // One proxy has one upstream: two servers behind it would be one server twice.
  if (twice !== undefined) throw new BadInput(`${where}: two servers name the proxy ${JSON.stringify(twice)}`);
  return { servers: names.map((n) => servers.find((s) => s.name === n)!), toxiproxy };
}

/** A Toxiproxy's API address (--toxiproxy, or "toxiproxy" in --endpoints), without a trailing slash; or "auto", one the run starts. */
export function toxiproxyUrl(value: unknown, at: string): string {
  if (value === "auto") return value;
  if (typeof value !== "string" || !/^https?:\/\/[^/]+/.test(value)) throw new BadInput(`${at} must be an http:// URL or auto, got ${JSON.stringify(value)}`);
  return value.replace(/\/+$/, "");
}

function serverOf(raw: unknown, i: number, names: readonly string[], at: string): ExternalServer {
  const s = raw as Record<string, unknown>;
  if (!s || typeof s !== "object") throw new BadInput(`${at}: expected an object`);
  const name = s.name ?? names[i];
  if (typeof name !== "string") throw new BadInput(`${at}: "name" must be a string`);
  if (s.proxy !== undefined && (typeof s.proxy !== "string" || s.proxy === "")) throw new BadInput(`${at}: "proxy" must be the name of a proxy on your Toxiproxy`);
  const proxy = s.proxy as string | undefined;
  // Behind a proxy of the user's, the proxy alone may say where the server is.
  const addressed = s.host !== undefined || s.port !== undefined || proxy === undefined;
  if (addressed) {
    if (typeof s.host !== "string" || s.host === "") throw new BadInput(`${at}: "host" must be a host name or address${proxy === undefined ? ' (or give "proxy", a proxy of yours in front of it)' : ""}`);
    if (!Number.isInteger(s.port) || (s.port as number) < 1 || (s.port as number) > 65535) throw new BadInput(`${at}: "port" must be a port number`);
  }
  const control: Partial<Record<ControlVerb, string>> = {};
  if (s.control !== undefined) {
    if (typeof s.control !== "object" || s.control === null) throw new BadInput(`${at}: "control" must be an object of commands`);
    for (const [verb, cmd] of Object.entries(s.control)) {
      if (!["pause", "resume", "kill", "restart"].includes(verb)) throw new BadInput(`${at}: control "${verb}" is none of pause, resume, kill, restart`);
      if (typeof cmd !== "string" || cmd === "") throw new BadInput(`${at}: control "${verb}" must be a shell command`);
      control[verb as ControlVerb] = cmd;
    }
  }
  return { name, ...(addressed ? { host: s.host as string, port: s.port as number } : {}), ...(proxy ? { proxy } : {}), control };
}
