// The images a docker-mode run's servers run in, built from the Dockerfile their
// backend names (backends/NAME/docker/Dockerfile) when missing, and tagged with a hash of what goes into them (the Dockerfile and
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
import type { ImageSource } from "../cluster/deployment.ts";

/** Where an image whose server's wall clock the clock nemesis moves keeps the libraries that let it (libfaketime, and the shim a server may need beside it), to be preloaded in that order. */
export const IMAGE_FAKETIME_PRELOAD = ["/usr/local/lib/fencecheck/faketime-shim.so", "/usr/local/lib/fencecheck/libfaketime.so.1"];

/** "fencecheck-redis:3f2a9c01b7de": the name, and a hash of the build context. */
export function imageTag(image: ImageSource, root = ROOT): string {
  const { dockerfile, files } = image;
  const hash = createHash("sha256");
  for (const f of [dockerfile, ...files]) hash.update(f).update("\0").update(readFileSync(join(root, f))).update("\0");
  return `fencecheck-${image.name}:${hash.digest("hex").slice(0, 12)}`;
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
export async function ensureImage(docker: Docker, image: ImageSource, log: (line: string) => void): Promise<string> {
  const tag = imageTag(image);
  if (await exists(docker, tag)) return tag;
  const lock = join(tmpdir(), `fencecheck-build-${tag.replace(/[^a-z0-9.-]/gi, "_")}.lock`);
  // A lock older than the slowest build is a builder that died.
  return withDirLock(lock, { staleMs: 15 * 60_000, doneMeanwhile: async () => ((await exists(docker, tag)) ? tag : null) }, async () => {
    if (await exists(docker, tag)) return tag;
    log(`fencecheck: building image ${tag} from ${image.dockerfile} (once for this version of fencecheck; Debian packages, a minute or two)`);
    await build(docker, image, tag);
    return tag;
  });
}

async function build(docker: Docker, image: ImageSource, tag: string): Promise<void> {
  const { dockerfile, files } = image;
  const stream = await docker.buildImage({ context: ROOT, src: [dockerfile, ...files] }, { t: tag, dockerfile, labels: { "fencecheck.image": image.name } });
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
