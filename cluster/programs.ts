// The programs a run starts for its servers, where Debian's packages put them,
// and the variables by which a user names others (a Postgres of another version,
// a redis-server of their own build). Kept apart from the code that starts them,
// so that set-up and run.json can name them without loading a server's client
// library.
import { accessSync, constants } from "node:fs";
import { delimiter, join } from "node:path";

export const redisBinary = (): string => process.env.FENCECHECK_REDIS_SERVER ?? "redis-server";
export const etcdBinary = (): string => process.env.FENCECHECK_ETCD ?? "etcd";
/** ZooKeeper is a Java program: its arguments start with the JVM's (backends/zookeeper/server.ts). */
export const javaBinary = (): string => process.env.FENCECHECK_JAVA ?? "java";
/** dynalite (the embedded DynamoDB) and our lock server are Node programs: their arguments start with their script (backends/dynamodb/server.ts, backends/lockserver/). */
export const nodeBinary = (): string => process.execPath;
/** Where Debian's postgresql-15 keeps its programs (not on PATH). */
export const pgBin = (program: string): string => join(process.env.FENCECHECK_PG_BIN ?? "/usr/lib/postgresql/15/bin", program);
export const pgbouncerBinary = (): string => process.env.FENCECHECK_PGBOUNCER ?? "pgbouncer";

/** Where Debian's package puts the ZooKeeper server and the logging it needs (slf4j to log4j 1.2, both its dependencies). */
export const ZK_CLASSPATH = ["/etc/zookeeper/conf", "/usr/share/java/zookeeper.jar", "/usr/share/java/slf4j-log4j12.jar", "/usr/share/java/log4j-1.2.jar"];

/** The file a program is: a path as given, or a name found on PATH; null when there is no such executable. */
export function findProgram(program: string): string | null {
  const executable = (p: string): boolean => {
    try {
      accessSync(p, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  };
  if (program.includes("/")) return executable(program) ? program : null;
  for (const dir of (process.env.PATH ?? "").split(delimiter)) if (dir !== "" && executable(join(dir, program))) return join(dir, program);
  return null;
}
