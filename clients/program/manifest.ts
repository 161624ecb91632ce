// An adapter program's manifest (`--client ./my-lock.adapter.json`): the command
// that starts it and what it says of its lock, read and checked before anything
// starts, so a wrong one is refused naming the field (docs/adapter-protocol.md).
import { existsSync, readFileSync } from "node:fs";
import { dirname, isAbsolute, resolve } from "node:path";
import { BadInput } from "../../lib/exit.ts";
import type { LockKinds } from "../lock.ts";
import { ecosystemOf, ENVIRONMENT_FILES } from "./environment.ts";
import { PROTOCOL_VERSION, readKinds, RENEW_MODES, type RenewMode } from "./messages.ts";

export interface ProgramSpec {
  /** The manifest's absolute path, which names the adapter in messages. */
  path: string;
  protocol: number;
  describe: string;
  command: string[];
  /** Where the program runs: the manifest's directory. */
  cwd: string;
  env: Record<string, string>;
  /** The absolute path of the lock file its environment is built from (clients/program/environment.ts); absent: it runs with the machine's. */
  environment?: string;
  backends: string[];
  fences: boolean;
  renew: RenewMode;
  /** The lock kinds it offers beyond the mutex, and whether it can cancel a wait ({} when the manifest says none). */
  kinds: LockKinds;
}

/** Whether a --client value names an adapter program's manifest. */
export const isManifestPath = (name: string): boolean => name.endsWith(".json");

export function readManifest(path: string): ProgramSpec {
  const named = `--client ${path}`;
  let o: unknown;
  try {
    o = JSON.parse(readFileSync(path, "utf8"));
  } catch (err) {
    throw new BadInput(`${named}: ${err instanceof SyntaxError ? `not valid JSON (${err.message})` : (err as Error).message}`);
  }
  if (typeof o !== "object" || o === null || Array.isArray(o)) throw new BadInput(`${named}: an adapter manifest is a JSON object (docs/adapter-protocol.md)`);
  const m = o as Record<string, unknown>;
  const wrong: string[] = [];
  if (m.protocol !== PROTOCOL_VERSION) wrong.push(`"protocol" must be ${PROTOCOL_VERSION} (the version this fencecheck speaks), not ${JSON.stringify(m.protocol)}`);
  if (typeof m.describe !== "string" || m.describe === "") wrong.push(`"describe" must be a string saying what the lock is`);
  const command = m.command;
  if (!Array.isArray(command) || command.length === 0 || !command.every((w) => typeof w === "string" && w !== "")) wrong.push(`"command" must be a non-empty list of strings (the program and its arguments)`);
  if (!Array.isArray(m.backends) || m.backends.length === 0 || !m.backends.every((b) => typeof b === "string")) wrong.push(`"backends" must list the backends it works with, by their --backend names`);
  if (typeof m.fences !== "boolean") wrong.push(`"fences" must be true or false`);
  if (!RENEW_MODES.includes(m.renew as RenewMode)) wrong.push(`"renew" must be one of ${RENEW_MODES.join(", ")}`);
  const kinds = m.kinds === undefined ? {} : readKinds(m.kinds);
  if (typeof kinds === "string") wrong.push(kinds);
  const env = m.env ?? {};
  if (typeof env !== "object" || env === null || Array.isArray(env) || !Object.values(env).every((v) => typeof v === "string")) wrong.push(`"env" must be an object of strings`);
  const environment = m.environment === undefined ? undefined : typeof m.environment === "string" && m.environment !== "" && !isAbsolute(m.environment) ? resolve(dirname(path), m.environment) : null;
  if (environment === null) wrong.push(`"environment" must be the path of its lock file relative to the manifest's directory`);
  else if (environment !== undefined && ecosystemOf(environment) === null) wrong.push(`"environment" must name ${ENVIRONMENT_FILES}, not ${JSON.stringify(m.environment)}`);
  else if (environment !== undefined && !existsSync(environment)) wrong.push(`"environment" ${JSON.stringify(m.environment)} does not exist (${environment})`);
  if (wrong.length) throw new BadInput(`${named}: ${wrong.join("; ")}`);
  return {
    path,
    protocol: m.protocol as number,
    describe: m.describe as string,
    command: command as string[],
    cwd: dirname(path),
    env: env as Record<string, string>,
    ...(environment ? { environment } : {}),
    backends: m.backends as string[],
    fences: m.fences as boolean,
    renew: m.renew as RenewMode,
    kinds: kinds as LockKinds,
  };
}
