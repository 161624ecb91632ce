// Which container engine a docker-mode run talks to: DOCKER_HOST when set (as the
// docker CLI reads it), else Docker's socket, else Podman's (rootful, then the
// user's), the first that answers a ping. Podman serves Docker's API, so one
// client (dockerode) drives both.
import Docker from "dockerode";
import { existsSync } from "node:fs";

export interface Engine {
  docker: Docker;
  /** Where it was found, for messages and run.json: "unix:///run/podman/podman.sock". */
  where: string;
  /** "Docker Engine - Community 27.1", "Podman Engine 4.3.1". */
  version: string;
}

/** No engine answered: the message lists where we looked and how to get one. */
export class NoEngine extends Error {}

function candidates(env: NodeJS.ProcessEnv): Array<{ where: string; options: Docker.DockerOptions }> {
  const host = env.DOCKER_HOST;
  if (host) {
    if (host.startsWith("unix://")) return [{ where: host, options: { socketPath: host.slice("unix://".length) } }];
    const m = /^tcp:\/\/([^:/]+)(?::(\d+))?\/?$/.exec(host);
    if (m) return [{ where: host, options: { host: m[1], port: Number(m[2] ?? 2375), protocol: "http" } }];
    throw new NoEngine(`DOCKER_HOST=${host} is neither unix:///path nor tcp://host:port`);
  }
  const sockets = ["/var/run/docker.sock", "/run/podman/podman.sock"];
  if (env.XDG_RUNTIME_DIR) sockets.push(`${env.XDG_RUNTIME_DIR}/podman/podman.sock`);
  return sockets.filter((s) => existsSync(s)).map((s) => ({ where: `unix://${s}`, options: { socketPath: s } }));
}

export async function findEngine(env: NodeJS.ProcessEnv = process.env): Promise<Engine> {
  const tried: string[] = [];
  for (const c of candidates(env)) {
    const docker = new Docker({ ...c.options, timeout: 60_000 });
    try {
      const v = (await docker.version()) as { Version?: string; Components?: Array<{ Name?: string }> };
      const product = v.Components?.[0]?.Name ?? "engine";
      return { docker, where: c.where, version: `${product} ${v.Version ?? "?"}` };
    } catch (err) {
      tried.push(`${c.where} (${(err as Error).message.split("\n")[0]})`);
    }
  }
  throw new NoEngine(
    `--deploy docker needs a container engine, and none answered` +
      (tried.length ? `: tried ${tried.join(", ")}` : " (no DOCKER_HOST, no /var/run/docker.sock, no /run/podman/podman.sock)") +
      `. Start Docker, or run \`fencecheck setup --extras docker\` (it installs and starts Podman on Debian), or set DOCKER_HOST.`,
  );
}

/**
 * The engine's container list. Podman builds it by reading each container's
 * /proc/<pid>/cgroup, and a container whose process exits at that moment fails
 * the whole list with a 500 ("no such process"); asked again, it lists the
 * container as exited. So such an answer is asked again, a few times.
 */
export async function listContainers(docker: Docker, opts: Docker.ContainerListOptions): Promise<Docker.ContainerInfo[]> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await docker.listContainers(opts);
    } catch (err) {
      if (attempt >= 5 || !/no such process/.test(String((err as Error)?.message))) throw err;
      await new Promise((r) => setTimeout(r, 100 * attempt));
    }
  }
}
