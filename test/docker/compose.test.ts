// The compose lab (docker/compose.yml, docker/toxiproxy.json, docker/prometheus.yml)
// read as files: no engine, no network. What `up` would get wrong without a word:
// a Dockerfile that isn't there, a port on every interface or on a server's
// default, a proxy to a port nothing listens on, an etcd cluster or ZooKeeper
// ensemble naming a member it doesn't have, a pgbouncer pooling for a server
// that isn't there, a Prometheus scraping another port than docs/docker.md tells
// runs to serve on, a table there that says other ports than the lab has, and a
// file it builds from or mounts that the package leaves out.
import { describe, it, expect } from "vitest";
import { existsSync, readFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parse } from "yaml";
import { TOXIPROXY_PORT } from "../../cluster/ports.ts";
import { IMAGES, WELL_KNOWN_PORTS } from "../../backends/index.ts";
import { sectionTable } from "../docs/markdown.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const DOCKER = join(ROOT, "docker");
// The servers' own defaults, the ones fencecheck's runs never take, and Prometheus': none is ours to bind.
const DEFAULTS = [...WELL_KNOWN_PORTS, TOXIPROXY_PORT, 9090];

interface Service {
  image?: string;
  build?: { context: string; dockerfile: string };
  command?: string[];
  ports?: Array<string | { host_ip?: string; published?: string | number; target: number }>;
  volumes?: string[];
  network_mode?: string;
}
interface ToxiproxyConfig {
  name: string;
  listen: string;
  upstream: string;
  enabled: boolean;
}

// merge: the file shares each server kind's build and image with YAML's "<<", as Compose reads it.
const compose = parse(readFileSync(join(DOCKER, "compose.yml"), "utf8"), { merge: true }) as { services: Record<string, Service> };
const services = Object.entries(compose.services ?? {});
const proxies = JSON.parse(readFileSync(join(DOCKER, "toxiproxy.json"), "utf8")) as ToxiproxyConfig[];

const command = (s: Service): string[] => (Array.isArray(s.command) ? s.command.map(String) : []);
/** The values of `--flag v`, `--flag=v` or `-flag v` in a command. */
function flag(s: Service, name: string): string[] {
  const c = command(s);
  return c.flatMap((a, i) => (a === name ? [c[i + 1] ?? ""] : a.startsWith(`${name}=`) ? [a.slice(name.length + 1)] : []));
}
const portOf = (hostPort: string): number => Number(hostPort.slice(hostPort.lastIndexOf(":") + 1));
const hostOf = (hostPort: string): string => hostPort.slice(0, hostPort.lastIndexOf(":"));
/** The script of a `sh -c SCRIPT` command (one that writes a server's files first), else "". */
const script = (s: Service): string => (command(s)[0] === "sh" && command(s)[1] === "-c" ? (command(s)[2] ?? "") : "");
/** The program a service runs: its command's first word, or the one its script execs in the end. */
const program = (s: Service): string => (script(s) ? ([...script(s).matchAll(/^\s*exec\s+(\S+)/gm)].at(-1)?.[1] ?? "sh") : (command(s)[0] ?? ""));
/** A `key = value` line of the file a service's script writes (pgbouncer's ini). */
const written = (s: Service, key: string): string | undefined => script(s).match(new RegExp(`^\\s*${key}\\s*=\\s*(.*)$`, "m"))?.[1]?.trim();
const etcds = services.filter(([, s]) => program(s) === "etcd");
const isZk = (s: Service): boolean => program(s) === "java" && command(s).includes("org.apache.zookeeper.server.quorum.QuorumPeerMain");
const zks = services.filter(([, s]) => isZk(s));
const configured = services.filter(([, s]) => flag(s, "-config").length > 0);

/** The file of the repository a path inside a service's container is, through its bind mounts (the innermost that holds it). */
function mounted(s: Service, path: string): string | undefined {
  const [host, inside] =
    (s.volumes ?? [])
      .map((v) => v.split(":"))
      .filter(([, to]) => to !== undefined && (path === to || path.startsWith(`${to}/`)))
      .sort(([, a], [, b]) => b!.length - a!.length)[0] ?? [];
  return host && inside ? join(resolve(DOCKER, host), path.slice(inside.length)) : undefined;
}

interface ZkServer {
  host: string;
  quorum: number;
  election: number;
  client?: number;
}
/**
 * A ZooKeeper member as the files mounted into it make it: its id (the myid in
 * its dataDir), its zoo.cfg's server lines (`host:quorum:election[;[address:]client]`)
 * and clientPort. Undefined where a file is not mounted from the repository.
 */
function zkMember(s: Service): { id: number; servers: Map<number, ZkServer>; clientPort?: number } | undefined {
  const cfg = mounted(s, command(s).at(-1) ?? "");
  if (!cfg || !existsSync(cfg)) return undefined;
  const props = new Map(
    readFileSync(cfg, "utf8")
      .split("\n")
      .filter((l) => l.includes("=") && !l.trimStart().startsWith("#"))
      .map((l) => [l.slice(0, l.indexOf("=")).trim(), l.slice(l.indexOf("=") + 1).trim()] as const),
  );
  const myid = mounted(s, `${props.get("dataDir")}/myid`);
  if (!myid || !existsSync(myid)) return undefined;
  const servers = new Map<number, ZkServer>();
  for (const [key, value] of props) {
    const id = key.match(/^server\.(\d+)$/)?.[1];
    const m = value.match(/^([^:;]+):(\d+):(\d+)(?::\w+)?(?:;(?:.*:)?(\d+))?$/);
    if (id && m) servers.set(Number(id), { host: m[1]!, quorum: Number(m[2]), election: Number(m[3]), ...(m[4] ? { client: Number(m[4]) } : {}) });
  }
  const clientPort = props.get("clientPort");
  return { id: Number(readFileSync(myid, "utf8").trim()), servers, ...(clientPort ? { clientPort: Number(clientPort) } : {}) };
}

/** The ports a server's command (and the files it reads) make it listen on; a server's default where it names none. */
function listening(s: Service): number[] {
  if (program(s) === "redis-server") return flag(s, "--port").map(Number);
  if (program(s) === "etcd") return [...flag(s, "--listen-client-urls"), ...flag(s, "--listen-peer-urls")].flatMap((u) => u.split(",")).map((u) => Number(new URL(u).port));
  if (isZk(s)) {
    const m = zkMember(s);
    const own = m?.servers.get(m.id);
    // A client port in the member's own server line wins over clientPort (ZooKeeper refuses the two when they differ).
    return own ? [own.client ?? m!.clientPort ?? 2181, own.quorum, own.election] : [];
  }
  if (program(s) === "fencecheck-postgres") {
    const ports = [...flag(s, "-p"), ...flag(s, "-c").filter((c) => c.startsWith("port=")).map((c) => c.slice("port=".length))];
    return ports.length ? ports.map(Number) : [5432];
  }
  if (program(s) === "fencecheck-pgbouncer") return [Number(written(s, "listen_port") ?? 6432)];
  return [];
}
/** Where a service on the host's network listens: Toxiproxy's -host and -port, Prometheus' --web.listen-address. */
function onHost(s: Service): Array<{ ip: string; port: number }> {
  const web = flag(s, "--web.listen-address");
  if (web.length) return web.map((a) => ({ ip: hostOf(a), port: portOf(a) }));
  return flag(s, "-port").map((p) => ({ ip: flag(s, "-host")[0] ?? "", port: Number(p) }));
}
/** Published ports: host address, host port, container port. */
function published(s: Service): Array<{ ip: string; host: number; container: number }> {
  return (s.ports ?? []).map((p) => {
    if (typeof p !== "string") return { ip: p.host_ip ?? "", host: Number(p.published), container: Number(p.target) };
    const parts = p.replace(/\/tcp$/, "").split(":");
    return parts.length === 3 ? { ip: parts[0]!, host: Number(parts[1]), container: Number(parts[2]) } : { ip: "", host: Number(parts.at(-2)), container: Number(parts.at(-1)) };
  });
}
/** What the host finds on each 127.0.0.1 port: the image behind it (a proxy's upstream for a proxy port). */
function hostEndpoints(): Map<number, string> {
  const out = new Map<number, string>();
  for (const [, s] of services) {
    for (const p of published(s)) {
      const proxy = flag(s, "-config").length > 0 ? proxies.find((x) => portOf(x.listen) === p.container) : undefined;
      out.set(p.host, proxy ? (compose.services[proxy.upstream.split(":")[0]!]?.image ?? "?") : (s.image ?? "?"));
    }
    if (s.network_mode === "host") for (const { port } of onHost(s)) out.set(port, s.image ?? "?");
  }
  return out;
}

describe("docker/compose.yml", () => {
  it("parses, and every built service names a Dockerfile of the repository", () => {
    const built = services.filter(([, s]) => s.build);
    expect(built.length).toBeGreaterThan(0);
    for (const [name, s] of built) {
      const dockerfile = resolve(DOCKER, s.build!.context, s.build!.dockerfile);
      expect(existsSync(dockerfile), `${name}: ${dockerfile} does not exist`).toBe(true);
      expect(s.image, `${name}: an image name, so it is built once and reused`).toMatch(/^fencecheck-lab-/);
    }
  });

  it("binds 127.0.0.1 only, and never a default port on the host nor inside", () => {
    for (const [name, s] of services) {
      for (const p of published(s)) {
        expect(p.ip, `${name} publishes ${p.host} beyond loopback`).toBe("127.0.0.1");
        expect(DEFAULTS, `${name} publishes a default port`).not.toContain(p.host);
      }
      // A service on the host's network listens on the host itself: its API address is what binds.
      if (s.network_mode === "host") {
        expect(s.ports ?? [], `${name}: ports mean nothing on the host network`).toEqual([]);
        const listens = onHost(s);
        expect(listens.map((l) => l.ip), name).toEqual(["127.0.0.1"]);
        expect(listens.map((l) => l.port).filter((p) => p > 0 && !DEFAULTS.includes(p)), `${name}: an API port of our own`).toHaveLength(1);
      }
      for (const p of listening(s)) expect(DEFAULTS, `${name} listens on a default port`).not.toContain(p);
    }
    for (const p of proxies) expect(DEFAULTS, `proxy ${p.name} listens on a default port`).not.toContain(portOf(p.listen));
  });

  it("has one proxy per server, each to a port its server listens on, each published by the Toxiproxy", () => {
    expect(configured.map(([n]) => n), "one Toxiproxy reads docker/toxiproxy.json").toHaveLength(1);
    const [tname, toxiproxy] = configured[0]!;
    expect(toxiproxy.volumes ?? [], `${tname} mounts the config it reads`).toContainEqual(expect.stringMatching(/^\.\/toxiproxy\.json:\/config\/toxiproxy\.json(:ro)?$/));
    expect(flag(toxiproxy, "-config")).toEqual(["/config/toxiproxy.json"]);
    const publishedHere = published(toxiproxy).map((p) => p.container);
    for (const p of proxies) {
      const [service, port] = p.upstream.split(":");
      expect(compose.services[service!], `proxy ${p.name}: no service ${service}`).toBeDefined();
      expect(listening(compose.services[service!]!), `proxy ${p.name}: ${service} does not listen on ${port}`).toContain(Number(port));
      expect(publishedHere, `proxy ${p.name}: ${tname} does not publish ${p.listen}`).toContain(portOf(p.listen));
      // "26383" means redlock-3 everywhere: on the host, in the Toxiproxy and in the server's container.
      const onTheHost = published(toxiproxy).find((x) => x.container === portOf(p.listen))?.host;
      expect([onTheHost, portOf(p.listen)], `proxy ${p.name}: the host's port, the proxy's and ${service}'s`).toEqual([Number(port), Number(port)]);
    }
    const servers = services.filter(([, s]) => s.build).map(([n]) => n).sort();
    expect(proxies.map((p) => p.upstream.split(":")[0]).sort()).toEqual(servers);
  });

  it("forms one etcd cluster of exactly the etcd services", () => {
    const names = etcds.map(([n]) => n).sort();
    expect(names.length).toBe(3);
    for (const [name, s] of etcds) {
      expect(flag(s, "--name"), name).toEqual([name]);
      const cluster = flag(s, "--initial-cluster")[0]?.split(",").map((m) => m.split("=")) ?? [];
      expect(cluster.map(([member]) => member).sort(), `${name}: --initial-cluster`).toEqual(names);
      for (const [member, url] of cluster) {
        const u = new URL(url!);
        expect(u.hostname, `${name}: ${member} is reached by its service name`).toBe(member);
        expect(flag(compose.services[member!]!, "--listen-peer-urls").map((l) => new URL(l).port), `${name}: ${member}'s peer port`).toContain(u.port);
      }
    }
  });

  it("forms one ZooKeeper ensemble of exactly the zk services", () => {
    const names = zks.map(([n]) => n).sort();
    expect(names.length).toBe(3);
    const lines = (m: NonNullable<ReturnType<typeof zkMember>>) => [...m.servers].sort(([a], [b]) => a - b);
    const first = zkMember(zks[0]![1]);
    for (const [name, s] of zks) {
      const m = zkMember(s);
      expect(m, `${name}: its zoo.cfg and its dataDir's myid, mounted from the repository`).toBeDefined();
      expect(lines(m!), `${name}: the server lines`).toEqual(lines(first!));
      expect([...m!.servers.values()].map((v) => v.host).sort(), `${name}: the members, by service name`).toEqual(names);
      expect(m!.servers.get(m!.id)?.host, `${name}: its myid is ${m!.id}, whose server line is not its own`).toBe(name);
    }
  });

  it("has a pgbouncer in transaction pooling for a Postgres of the lab", () => {
    const poolers = services.filter(([, s]) => program(s) === "fencecheck-pgbouncer");
    expect(poolers.map(([n]) => n)).toEqual(["pgbouncer"]);
    const [, pgbouncer] = poolers[0]!;
    expect(written(pgbouncer, "pool_mode")).toBe("transaction");
    const [, host, port] = written(pgbouncer, "postgres")?.match(/\bhost=(\S+)\s+port=(\d+)/) ?? [];
    expect(compose.services[host ?? ""], `pgbouncer: no service ${host}`).toBeDefined();
    expect(program(compose.services[host!]!)).toBe("fencecheck-postgres");
    expect(listening(compose.services[host!]!), `pgbouncer: ${host} does not listen on ${port}`).toContain(Number(port));
  });

  it("has a Prometheus on the host's network that scrapes the --metrics-port docs/docker.md gives runs", () => {
    const mounting = services.filter(([, s]) => (s.volumes ?? []).some((v) => v.startsWith("./prometheus.yml:")));
    expect(mounting.map(([n]) => n)).toEqual(["prometheus"]);
    const [, prometheus] = mounting[0]!;
    // The runner binds 127.0.0.1 on the host, which only the host's network namespace reaches.
    expect(prometheus.network_mode).toBe("host");
    expect(prometheus.image).toMatch(/^prom\/prometheus:v\d+\.\d+\.\d+$/);
    const mount = prometheus.volumes!.find((v) => v.startsWith("./prometheus.yml:"))!.split(":");
    expect(flag(prometheus, "--config.file"), "it reads the config it mounts").toEqual([mount[1]]);

    const config = parse(readFileSync(join(DOCKER, "prometheus.yml"), "utf8")) as { scrape_configs: Array<{ metrics_path?: string; static_configs: Array<{ targets: string[] }> }> };
    const targets = config.scrape_configs.flatMap((c) => {
      expect(c.metrics_path ?? "/metrics").toBe("/metrics");
      return c.static_configs.flatMap((t) => t.targets);
    });
    expect(targets).toHaveLength(1);
    expect(hostOf(targets[0]!)).toBe("127.0.0.1");
    const port = portOf(targets[0]!);
    expect(DEFAULTS).not.toContain(port);
    // Not a port the lab itself takes: the runner must be able to bind it while the lab is up.
    expect([...hostEndpoints().keys()]).not.toContain(port);
    const guide = readFileSync(join(ROOT, "docs", "docker.md"), "utf8");
    expect(guide, "docs/docker.md tells runs to serve on the port it scrapes").toContain(`--metrics-port ${port}`);
  });

  // docs/docker.md sends users to node_modules/fencecheck/docker/compose.yml.
  it("ships what it builds from and mounts in the package (package.json's files)", () => {
    const { files } = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { files: string[] };
    // npm's patterns as package.json has them: a folder ending in "/", or a path with "*" for one name.
    const glob = (f: string) => new RegExp(`^${f.split("*").map((part) => part.replace(/[.+?^${}()|[\]\\]/g, "\\$&")).join("[^/]*")}$`);
    const shipped = (path: string) => files.some((f) => !f.startsWith("!") && (f.endsWith("/") ? path.startsWith(f) : glob(f).test(path)));
    const needed = services.flatMap(([, s]) => {
      // The lab builds from the repository root, as docker mode does, so docker mode's list of what goes into an image holds here.
      const dockerfile = s.build ? relative(ROOT, resolve(DOCKER, s.build.context, s.build.dockerfile)) : undefined;
      const copied = IMAGES.find((i) => i.dockerfile === dockerfile)?.files ?? [];
      return [...(dockerfile ? [dockerfile, ...copied] : []), ...(s.volumes ?? []).map((v) => relative(ROOT, resolve(DOCKER, v.split(":")[0]!)))];
    });
    for (const path of new Set(needed)) expect(shipped(path), `${path} is not in package.json's files`).toBe(true);
  });

  it("is what docs/docker.md's table of the lab says", () => {
    const lab = sectionTable(readFileSync(join(ROOT, "docs", "docker.md"), "utf8"), /The compose lab/);
    expect(lab, "docs/docker.md has no table under 'The compose lab'").not.toBeNull();
    expect(lab!.columns, "the table's columns").toEqual(["what", "image", "on 127.0.0.1"]);
    const table = new Map<number, string>();
    for (const { image, "on 127.0.0.1": ports } of lab!.rows)
      for (const m of ports.matchAll(/(\d+)(?:\s*[-–]\s*(\d+))?/g))
        for (let p = Number(m[1]); p <= Number(m[2] ?? m[1]); p++) table.set(p, image);
    const sorted = (m: Map<number, string>) => [...m].sort(([a], [b]) => a - b);
    expect(sorted(table)).toEqual(sorted(hostEndpoints()));
  });
});
