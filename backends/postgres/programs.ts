// Postgres' and pgbouncer's programs, where Debian puts them and how a user names
// others, their container (one image for both), Postgres' version for run.json,
// and what a run installs for them.
import { join } from "node:path";
import type { ImageSource, ServerProgram } from "../../cluster/deployment.ts";
import { findProgram } from "../../cluster/programs.ts";
import type { VersionProbe } from "../../core/index.ts";
import { firstLine } from "../../lib/index.ts";
import { onPath, type Requirement } from "../../setup/requirements.ts";
import { environmentRequirement } from "../../clients/program/index.ts";
import { repoFile } from "../../lib/paths.ts";

/** Where Debian's postgresql-15 keeps its programs (not on PATH). */
export const pgBin = (program: string): string => join(process.env.FENCECHECK_PG_BIN ?? "/usr/lib/postgresql/15/bin", program);
export const pgbouncerBinary = (): string => process.env.FENCECHECK_PGBOUNCER ?? "pgbouncer";

/** Debian's postgresql-15 and pgbouncer, with the scripts that make a data directory and drop to the postgres user. */
const IMAGE: ImageSource = { name: "postgres", dockerfile: "backends/postgres/docker/Dockerfile", files: ["backends/postgres/docker/postgres.sh", "backends/postgres/docker/pgbouncer.sh"] };

export const POSTGRES_SERVER: ServerProgram = { name: "postgres", local: () => pgBin("postgres"), container: { command: "fencecheck-postgres", image: IMAGE }, defaultPorts: [5432] };
export const PGBOUNCER_SERVER: ServerProgram = { name: "pgbouncer", local: pgbouncerBinary, container: { command: "fencecheck-pgbouncer", image: IMAGE }, defaultPorts: [6432] };

export const POSTGRES_VERSION: VersionProbe = { file: () => findProgram(pgBin("postgres")), ask: () => firstLine(pgBin("postgres"), ["--version"]) };

export const POSTGRES: Requirement = {
  id: "postgres",
  serves: "--backend postgres and --resource postgres",
  packages: ["postgresql-15"],
  present: () => onPath(pgBin("postgres")),
  chosenBy: ["FENCECHECK_PG_BIN"],
  optional: true,
};

export const PGBOUNCER: Requirement = { id: "pgbouncer", serves: "--pg-pooler pgbouncer", packages: ["pgbouncer"], present: () => onPath(pgbouncerBinary()), chosenBy: ["FENCECHECK_PGBOUNCER"], optional: true };

/**
 * ShedLock from Maven Central (adapters/java/shedlock/pom.xml: its JDBC provider with
 * spring-jdbc and pgjdbc, its Redis provider with spring-data-redis and Lettuce): one
 * environment for the three manifests, of --backend postgres and redis alike.
 */
export const SHEDLOCK: Requirement = environmentRequirement("shedlock", "--client shedlock-jdbc, shedlock-jdbc-dbtime and shedlock-redis", repoFile("adapters/java/shedlock/shedlock-jdbc.adapter.json"));
