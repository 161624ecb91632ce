// Hazelcast's programs: its members (HazelcastMember.java) and its lock client
// (HazelcastLock.java, an adapter program) are compiled together from one pom.xml
// (java/, Hazelcast 5.4.0 from Maven Central) into one environment in fencecheck's
// cache, which a run builds before anything starts (runner/needs.ts); the members
// run on its classpath as local JVMs. Its version for run.json is the jar's.
import { basename } from "node:path";
import type { ServerProgram } from "../../cluster/deployment.ts";
import type { VersionProbe } from "../../core/index.ts";
import { environmentRequirement, readManifest } from "../../clients/program/index.ts";
import { programEnvironment } from "../../clients/program/environment.ts";
import { repoFile } from "../../lib/paths.ts";
import type { Requirement } from "../../setup/requirements.ts";
import { javaBinary, ZOOKEEPER_SERVER } from "../zookeeper/programs.ts";

/** The lock client's manifest, whose "environment" (java/pom.xml) is the members' too. */
export const HAZELCAST_MANIFEST = "backends/hazelcast/java/hazelcast.adapter.json";
/** The same program as ISemaphore (its argument "semaphore"), beside it. */
export const HAZELCAST_SEMAPHORE_MANIFEST = "backends/hazelcast/java/hazelcast-semaphore.adapter.json";

export const HAZELCAST_MEMBER: ServerProgram = {
  name: "hazelcast",
  local: javaBinary,
  // A member's port when not told, and the next two it would try (port auto-increment).
  defaultPorts: [5701, 5702, 5703],
  // In a container: a JVM, and the jars and classes of the environment in fencecheck's cache, mounted read-only
  // (server.ts). ZooKeeper's image is Debian's headless JRE (17, as the JDK that compiles the member program here)
  // with ZooKeeper's jars beside it, which the member does not read: one image for both, built once.
  container: { command: "java", image: ZOOKEEPER_SERVER.container!.image },
};

/** Hazelcast 5.4.0 from Maven Central, and the two programs compiled against it (Maven and a JDK build it; javac for the programs). */
export const HAZELCAST: Requirement = environmentRequirement("hazelcast", "--backend hazelcast (its members and its client)", repoFile(HAZELCAST_MANIFEST));

/** The environment's classpath (the compiled programs, then the jars); throws while it is not built. */
export function hazelcastClasspath(): string[] {
  const manifest = repoFile(HAZELCAST_MANIFEST);
  return programEnvironment(manifest, readManifest(manifest).environment).FENCECHECK_CLASSPATH.split(":");
}

/** The hazelcast jar the members run, or null while the environment is not built. */
function hazelcastJar(): string | null {
  try {
    return hazelcastClasspath().find((p) => /\/hazelcast-\d[^/]*\.jar$/.test(p)) ?? null;
  } catch {
    return null;
  }
}

/** "Hazelcast 5.4.0", from the jar's name: the one that runs, not the one a comment says. */
export const HAZELCAST_VERSION: VersionProbe = {
  file: hazelcastJar,
  ask: async () => {
    const jar = hazelcastJar();
    return jar ? `Hazelcast ${basename(jar).replace(/^hazelcast-|\.jar$/g, "")}` : null;
  },
};
