// ZooKeeper's program (a Java program: its arguments start with the JVM's), where
// Debian puts its jar, its container, its version for run.json, and what a run
// installs for it; the reference adapter programs' environments too (kazoo,
// Curator).
import { existsSync } from "node:fs";
import type { ServerProgram } from "../../cluster/deployment.ts";
import { findProgram } from "../../cluster/programs.ts";
import type { VersionProbe } from "../../core/index.ts";
import { firstLine } from "../../lib/index.ts";
import { environmentRequirement } from "../../clients/program/index.ts";
import { repoFile } from "../../lib/paths.ts";
import { onPath, type Requirement } from "../../setup/requirements.ts";

export const javaBinary = (): string => process.env.FENCECHECK_JAVA ?? "java";

/** Where Debian's package puts the ZooKeeper server and the logging it needs (slf4j to log4j 1.2, both its dependencies). */
export const ZK_CLASSPATH = ["/etc/zookeeper/conf", "/usr/share/java/zookeeper.jar", "/usr/share/java/slf4j-log4j12.jar", "/usr/share/java/log4j-1.2.jar"];

export const ZOOKEEPER_SERVER: ServerProgram = {
  name: "zookeeper",
  local: javaBinary,
  // Client, quorum, election and AdminServer.
  defaultPorts: [2181, 2888, 3888, 8080],
  container: { command: "java", image: { name: "zookeeper", dockerfile: "backends/zookeeper/docker/Dockerfile", files: [] } },
};

/** A Debian package's version (its jar says nothing without starting); dpkg's database changes whenever a package is installed or removed. */
export const ZOOKEEPER_VERSION: VersionProbe = { file: () => findProgram("dpkg-query") && "/var/lib/dpkg/status", ask: () => firstLine("dpkg-query", ["-W", "-f=${Version}", "zookeeper"]) };

export const ZOOKEEPER: Requirement = {
  id: "zookeeper",
  serves: "--backend zookeeper",
  // The package puts its jar in /usr/share/java and nothing on PATH; the JVM is its own package.
  packages: ["zookeeper", "default-jre-headless"],
  present: () => existsSync(ZK_CLASSPATH[1]) && onPath(javaBinary()),
};

/** kazoo from PyPI, in a venv of its own. */
export const KAZOO: Requirement = environmentRequirement("kazoo", "--client kazoo", repoFile("adapters/python/kazoo.adapter.json"));

/** Curator from Maven Central (adapters/java/pom.xml): its recipes bring its framework, ZooKeeper's client, Guava and slf4j; the environment's build compiles CuratorLock.java against them (javac). */
export const CURATOR: Requirement = environmentRequirement("curator", "--client curator", repoFile("adapters/java/curator.adapter.json"));
