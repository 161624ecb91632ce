// The images a docker-mode run's servers run in, built from docker/<kind>/Dockerfile
// when missing, and tagged with a hash of what goes into them (the Dockerfile and
// the files it copies), so a change to either builds a new image and an unchanged
// checkout never builds twice. The build context is the repository root, of which
// only those files are sent.
import type Docker from "dockerode";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT } from "../lib/index.ts";
import { withDirLock } from "../lib/dir-lock.ts";
import type { ServerKind } from "../cluster/deployment.ts";


/** The images (dynalite and our lock server have none: docker mode refuses those backends, runner/backends.ts says why). */
export type ImageKind = "redis" | "etcd" | "zookeeper" | "postgres";

/** The image each server kind runs in: pgbouncer shares Postgres' (one package set, one build). */
const IMAGE_OF: Partial<Record<ServerKind, ImageKind>> = { redis: "redis", etcd: "etcd", zookeeper: "zookeeper", postgres: "postgres", pgbouncer: "postgres" };

/** What each image is built from, relative to the repository root. */
export const IMAGE_SOURCES: Record<ImageKind, { dockerfile: string; files: string[] }> = {
  redis: { dockerfile: "backends/redis/docker/Dockerfile", files: ["cluster/faketime/shim.c"] },
  etcd: { dockerfile: "backends/etcd/docker/Dockerfile", files: [] },
  zookeeper: { dockerfile: "backends/zookeeper/docker/Dockerfile", files: [] },
  postgres: { dockerfile: "backends/postgres/docker/Dockerfile", files: ["backends/postgres/docker/postgres.sh", "backends/postgres/docker/pgbouncer.sh"] },
};

/** Where the redis image keeps the libraries that let the clock nemesis move its clock. */
export const IMAGE_FAKETIME_PRELOAD = ["/usr/local/lib/fencecheck/faketime-shim.so", "/usr/local/lib/fencecheck/libfaketime.so.1"];

/** "fencecheck-redis:3f2a9c01b7de": the name, and a hash of the build context. */
export function imageTag(kind: ImageKind, root = ROOT): string {
  const { dockerfile, files } = IMAGE_SOURCES[kind];
  const hash = createHash("sha256");
  for (const f of [dockerfile, ...files]) hash.update(f).update("\0").update(readFileSync(join(root, f))).update("\0");
  return `fencecheck-${kind}:${hash.digest("hex").slice(0, 12)}`;
}

async function exists(docker: Docker, tag: string): Promise<boolean> {
  try {
    await docker.getImage(tag).inspect();
    return true;
  } catch {
    return false;
  }
}

/**
 * The image's tag, built first if the engine does not have it. Runs started at once
 * (a test suite, two soaks) build it once: the first takes a lock directory, the
 * others wait for the image.
 */
export async function ensureImage(docker: Docker, server: ServerKind, log: (line: string) => void): Promise<string> {
  const kind = IMAGE_OF[server];
  if (!kind) throw new Error(`docker mode has no image for ${server} servers`);
  const tag = imageTag(kind);
  if (await exists(docker, tag)) return tag;
  const lock = join(tmpdir(), `fencecheck-build-${tag.replace(/[^a-z0-9.-]/gi, "_")}.lock`);
  // A lock older than the slowest build is a builder that died.
  return withDirLock(lock, { staleMs: 15 * 60_000, doneMeanwhile: async () => ((await exists(docker, tag)) ? tag : null) }, async () => {
    if (await exists(docker, tag)) return tag;
    log(`fencecheck: building image ${tag} from ${IMAGE_SOURCES[kind].dockerfile} (once for this version of fencecheck; Debian packages, a minute or two)`);
    await build(docker, kind, tag);
    return tag;
  });
}

async function build(docker: Docker, kind: ImageKind, tag: string): Promise<void> {
  const { dockerfile, files } = IMAGE_SOURCES[kind];
  const stream = await docker.buildImage({ context: ROOT, src: [dockerfile, ...files] }, { t: tag, dockerfile, labels: { "fencecheck.image": kind } });
  const output: string[] = [];
  await new Promise<void>((resolve, reject) => {
    docker.modem.followProgress(
      stream,
      (err: Error | null) => (err ? reject(err) : resolve()),
      (event: { stream?: string; error?: string; errorDetail?: { message?: string } }) => {
        if (event.stream) output.push(event.stream);
        if (event.error) reject(new Error(event.errorDetail?.message ?? event.error));
      },
    );
  }).catch((err: Error) => {
    throw new Error(`building ${tag} from ${dockerfile} failed: ${err.message}\n${output.join("").trimEnd().split("\n").slice(-15).join("\n")}`);
  });
  if (!(await exists(docker, tag))) throw new Error(`building ${tag} from ${dockerfile} ended without the image:\n${output.join("").trimEnd().split("\n").slice(-15).join("\n")}`);
}
