// A run's servers as containers: one network per run, one container per server,
// each server's ports published on the host's loopback at the same numbers it
// listens on inside, its data directory mounted at the same path (so a restarted
// container finds what it wrote, and the clock nemesis moves its clock by writing
// the same file as for a local process). Workers, the resource and the fault proxy
// stay on the host: they are fencecheck's own Node processes (Node 20 is not in
// Debian bookworm), and the faults they carry are the same either way.
import type Docker from "dockerode";
import { createWriteStream, type WriteStream } from "node:fs";
import { randomBytes } from "node:crypto";
import { networkInterfaces } from "node:os";
import { sleep } from "../lib/index.ts";
import type { ProcessGroup } from "../cluster/processes.ts";
import type { Deployment, PauseMode, ServerProgram, ServerSpec } from "../cluster/deployment.ts";
import { faketimeVars } from "../cluster/faketime.ts";
import type { Engine } from "./engine.ts";
import { ensureImage, IMAGE_FAKETIME_PRELOAD } from "./images.ts";
import { LABEL_OWNER, LABEL_RUN, LABEL_SERVER, reapedText, reapLeftovers } from "./leftovers.ts";
import { ownerLabel } from "../lib/owner.ts";

export interface DockerDeploymentOptions {
  engine: Engine;
  runDir: string;
  /** The run's process group: a container's process is watched by its reaper, so a runner killed outright leaves none running. */
  group: ProcessGroup;
  pauseMode: PauseMode;
  log: (line: string) => void;
}

export interface DockerDeployment extends Deployment {
  network: NonNullable<Deployment["network"]>;
  /** What run.json records: the engine, the network, the containers and their images. */
  describe(): Record<string, unknown>;
  /** Remove every container and the network (teardown). */
  stop(): Promise<void>;
}

interface Server {
  container: Docker.Container;
  image: string;
  up: boolean;
  frozen: boolean;
  /** The host pid of its main process while up (given to the reaper). */
  pid: number | null;
  log: WriteStream | null;
  /** Its main process forks the ones that serve (Postgres): only the freezer holds them all. */
  freezeOnly: boolean;
  /** Its address on the run's network, kept when it is first cut off (it joins again at it). */
  address?: string | null;
}

export async function dockerDeployment(o: DockerDeploymentOptions): Promise<DockerDeployment> {
  const { docker } = o.engine;
  const reaped = await reapLeftovers(docker);
  if (reaped.containers.length || reaped.networks.length || reaped.forwards.length)
    o.log(`fencecheck: removed ${reapedText(reaped)} left by runs that are gone`);
  const labels = { [LABEL_OWNER]: ownerLabel(), [LABEL_RUN]: o.runDir };
  // Unique among runs at once, even of one runner (a test suite).
  const tag = `fc-${process.pid}-${randomBytes(3).toString("hex")}`;
  const network = await docker.createNetwork({ Name: tag, Driver: "bridge", Labels: labels, CheckDuplicate: true });
  const info = (await network.inspect()) as { IPAM?: { Config?: Array<{ Gateway?: string }> } };
  const gateway = info.IPAM?.Config?.find((c) => c.Gateway)?.Gateway;
  const servers = new Map<string, Server>();
  let stopped = false;

  const server = (name: string): Server => {
    const s = servers.get(name);
    if (!s) throw new Error(`no container for ${name}`);
    return s;
  };

  const followLogs = async (s: Server, file: string, sinceS: number): Promise<void> => {
    const stream = (await s.container.logs({ follow: true, stdout: true, stderr: true, since: sinceS })) as unknown as NodeJS.ReadableStream;
    const out = createWriteStream(file, { flags: "a" });
    s.log = out;
    docker.modem.demuxStream(stream, out, out);
    stream.on("end", () => out.end());
    stream.on("error", () => out.end());
  };

  const start = async (spec: ServerSpec): Promise<void> => {
    if (stopped) throw new Error(`${spec.name} not started: the run is being torn down`);
    let s = servers.get(spec.name);
    if (!s) {
      const made = spec.program.container;
      if (!made) throw new Error(`${spec.name}: ${spec.program.name} has no container image (--deploy docker)`);
      const image = await ensureImage(docker, made.image, o.log);
      const ports = Object.fromEntries(spec.ports.map((p) => [`${p}/tcp`, [{ HostIp: "127.0.0.1", HostPort: String(p) }]]));
      const env = spec.clockFile ? Object.entries(faketimeVars(spec.clockFile, IMAGE_FAKETIME_PRELOAD)).map(([k, v]) => `${k}=${v}`) : [];
      const container = await docker.createContainer({
        name: `${tag}-${spec.name}`,
        Image: image,
        Cmd: [made.command, ...spec.args],
        Env: env,
        Labels: { ...labels, [LABEL_SERVER]: spec.name },
        ExposedPorts: Object.fromEntries(spec.ports.map((p) => [`${p}/tcp`, {}])),
        HostConfig: { Binds: [`${spec.dataDir}:${spec.dataDir}`, ...(spec.mounts ?? []).map((d) => `${d}:${d}:ro`)], PortBindings: ports, NetworkMode: tag },
        NetworkingConfig: { EndpointsConfig: { [tag]: { Aliases: [spec.name] } } },
      });
      s = { container, image, up: false, frozen: false, pid: null, log: null, freezeOnly: spec.withChildren ?? false };
      servers.set(spec.name, s);
    }
    const sinceS = Math.floor(Date.now() / 1000);
    await s.container.start();
    const state = ((await s.container.inspect()) as { State: { Pid: number; Running: boolean } }).State;
    s.up = state.Running;
    s.pid = state.Pid > 0 ? state.Pid : null;
    if (s.pid !== null && !stopped) o.group.watch(s.pid);
    s.log?.end();
    await followLogs(s, spec.logFile, sinceS);
    if (stopped) await stopOne(s);
  };

  // The network's gateway is this machine as the containers see it; a listener
  // there (an etcd member's peer proxy) is reachable from them and from nothing
  // outside this machine. The engine makes the bridge that carries it when the
  // network's first container starts, so before any server can, a container that
  // only sleeps brings it up (and keeps it up while members are killed).
  let anchor: Promise<Server> | null = null;
  const hostAddress = async (program: ServerProgram): Promise<string> => {
    if (!gateway) throw new Error(`the engine gave network ${tag} no gateway address, so its containers cannot reach a listener of this machine`);
    anchor ??= (async () => {
      if (!program.container) throw new Error(`${program.name} has no container image (--deploy docker)`);
      const image = await ensureImage(docker, program.container.image, o.log);
      const container = await docker.createContainer({
        name: `${tag}-anchor`,
        Image: image,
        Cmd: ["sleep", "infinity"],
        Labels: { ...labels, [LABEL_SERVER]: "anchor" },
        HostConfig: { NetworkMode: tag },
      });
      const s: Server = { container, image, up: false, frozen: false, pid: null, log: null, freezeOnly: false };
      servers.set("anchor", s);
      await container.start();
      const state = ((await container.inspect()) as { State: { Pid: number } }).State;
      s.up = true;
      s.pid = state.Pid > 0 ? state.Pid : null;
      if (s.pid !== null) o.group.watch(s.pid);
      return s;
    })();
    await anchor;
    for (let i = 0; i < 100 && !bridgeUp(gateway); i++) await sleep(50);
    return gateway;
  };

  const markDown = (s: Server): void => {
    s.up = false;
    s.frozen = false;
    if (s.pid !== null) o.group.unwatch(s.pid);
    s.pid = null;
  };

  const freezes = (s: Server): boolean => o.pauseMode === "freeze" || s.freezeOnly;

  const kill = async (name: string): Promise<void> => {
    const s = servers.get(name);
    if (!s || !s.up) return;
    if (s.frozen && freezes(s)) await s.container.unpause().catch(() => {});
    await s.container.kill({ signal: "SIGKILL" }).catch(() => {});
    await s.container.wait().catch(() => {});
    markDown(s);
  };

  const stopOne = async (s: Server): Promise<void> => {
    await s.container.remove({ force: true, v: true }).catch(() => {});
    markDown(s);
    s.log?.end();
  };

  const signal = async (name: string, freeze: () => Promise<unknown>, sig: string, frozen: boolean): Promise<boolean> => {
    const s = server(name);
    if (!s.up) return false;
    try {
      if (freezes(s)) await freeze();
      else await s.container.kill({ signal: sig });
      s.frozen = frozen;
      return true;
    } catch {
      return false;
    }
  };

  return {
    name: "docker",
    bindHost: "0.0.0.0",
    memberHost: (name) => name,
    hostAddress,
    start,
    running: (name) => servers.get(name)?.up ?? false,
    kill,
    pause: (name) => signal(name, () => server(name).container.pause(), "SIGSTOP", true),
    resume: (name) => signal(name, () => server(name).container.unpause(), "SIGCONT", false),
    network: {
      // A member joins again at the address it had: the engine would give it any
      // free one, and then every TCP connection its peers had with it (ZooKeeper's
      // election and quorum links, which have no timeouts of their own) would
      // stay half-open for the kernel's retransmission timeout, a quarter of an
      // hour, instead of resuming with the heal as they do across a real cut.
      disconnect: async (name) => {
        const s = server(name);
        s.address ??= await addressOn(s.container, tag);
        await network.disconnect({ Container: s.container.id, Force: true });
      },
      connect: async (name) => {
        const s = server(name);
        await network.connect({ Container: s.container.id, EndpointConfig: { Aliases: [name], ...(s.address ? { IPAMConfig: { IPv4Address: s.address } } : {}) } });
      },
    },
    describe: () => ({
      engine: o.engine.where,
      version: o.engine.version,
      network: tag,
      gateway: gateway ?? null,
      pause_mode: o.pauseMode,
      containers: Object.fromEntries([...servers].map(([name, s]) => [name, { id: s.container.id.slice(0, 12), image: s.image }])),
    }),
    async stop() {
      stopped = true;
      await Promise.all([...servers.values()].map(stopOne));
      await network.remove().catch(() => {});
    },
  };
}

/** Whether this machine has the address now (a remote engine's gateway is never here: then we do not wait). */
function bridgeUp(address: string): boolean {
  return Object.values(networkInterfaces()).some((list) => list?.some((a) => a.address === address));
}

/** The container's IPv4 address on the network, or null when the engine does not say. */
async function addressOn(container: Docker.Container, network: string): Promise<string | null> {
  const info = (await container.inspect()) as { NetworkSettings?: { Networks?: Record<string, { IPAddress?: string }> } };
  return info.NetworkSettings?.Networks?.[network]?.IPAddress || null;
}
