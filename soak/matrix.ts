// A soak's matrix: configurations as data, each a name, the options of one
// `test:jepsen` run, and what its runs are expected to show. Every configuration
// is turned into the argument list of `test:jepsen` and put through that
// command's own parser and test builder before anything runs, so a matrix cannot
// hold an option or a value that `test:jepsen` would refuse.
import { createHash } from "node:crypto";
import { readFileSync, readdirSync } from "node:fs";
import { basename, extname, join } from "node:path";
import { BadInput, repoFile, parseArgs, noPositional, didYouMean, type OptionValue } from "../lib/index.ts";
import { TEST_OPTIONS, buildTest } from "../runner/index.ts";
import { ANOMALY_TYPES, type AnomalyType } from "../store/events.ts";

/**
 * `valid`: a safe configuration, where any anomaly is a finding (a regression or
 * a false alarm). `find`: an unsafe one the tool must keep catching, each listed
 * anomaly type in at least that share of the runs that were checked.
 */
/**
 * `observe`: no claim either way, the runs are reported as they come (the library
 * table: what a library does is the finding, not a pass or a fail).
 * `valid`: no anomaly in any run; `exercised`, where given, the share of runs
 * that must also have had a stale write refused, so that "valid" means fencing
 * worked, not that no fault ever made a stale holder. `find`: each anomaly type
 * with the share of runs it must be found in.
 */
export type Expectation = { kind: "valid"; exercised?: number } | { kind: "find"; find: Partial<Record<AnomalyType, number>> } | { kind: "observe" };

export interface Configuration {
  name: string;
  description: string;
  /** test:jepsen options by name, as the matrix gives them. */
  options: Record<string, OptionValue>;
  expect: Expectation;
}

export interface Matrix {
  /** Soaks of the same matrix name are compared with each other. */
  name: string;
  /** Where it came from: "preset nightly" or a file path. */
  source: string;
  configurations: Configuration[];
  /** Of the configurations as data: tells whether two nights ran the same matrix. */
  hash: string;
}

/** Options the soak itself sets for each run; a configuration may not. */
const SOAK_OWNED = new Set(["seed", "store", "metrics-port"]);
const NAME = /^[a-z0-9][a-z0-9._-]{0,63}$/;
const PRESETS_DIR = repoFile("soak/presets");

/** The shipped presets: the JSON files in soak/presets/. */
export function presetNames(): string[] {
  return readdirSync(PRESETS_DIR)
    .filter((f) => f.endsWith(".json"))
    .map((f) => f.slice(0, -".json".length))
    .sort();
}

export function loadPreset(name: string): Matrix {
  if (!presetNames().includes(name)) throw new BadInput(`--preset: unknown preset ${JSON.stringify(name)}; choose from ${presetNames().join(", ")}`);
  return parseMatrix(readFileSync(join(PRESETS_DIR, `${name}.json`), "utf8"), `preset ${name}`, name);
}

export function loadMatrixFile(path: string): Matrix {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    throw new BadInput(`--matrix ${path}: cannot be read (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  }
  return parseMatrix(text, path, basename(path, extname(path)));
}

/** A matrix from its JSON text; every configuration checked as test:jepsen would check it. */
export function parseMatrix(text: string, source: string, defaultName: string): Matrix {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new BadInput(`${source}: not JSON (${err instanceof Error ? err.message : String(err)})`);
  }
  if (!isObject(raw)) throw new BadInput(`${source}: a matrix is a JSON object with "configurations"`);
  unknownKeys(raw, ["name", "description", "configurations"], source);
  const name = raw.name === undefined ? defaultName : raw.name;
  if (typeof name !== "string" || !NAME.test(name)) throw new BadInput(`${source}: "name" must be lower-case letters, digits, '.', '_' or '-', got ${JSON.stringify(name)}`);
  if (!Array.isArray(raw.configurations) || raw.configurations.length === 0) throw new BadInput(`${source}: "configurations" must be a non-empty array`);
  const seen = new Set<string>();
  const configurations = raw.configurations.map((c, i) => {
    const config = parseConfiguration(c, `${source}, configurations[${i}]`);
    if (seen.has(config.name)) throw new BadInput(`${source}: configuration "${config.name}" appears twice`);
    seen.add(config.name);
    return config;
  });
  const hash = createHash("sha256").update(JSON.stringify(configurations)).digest("hex").slice(0, 12);
  return { name, source, configurations, hash };
}

function parseConfiguration(raw: unknown, where: string): Configuration {
  if (!isObject(raw)) throw new BadInput(`${where}: a configuration is an object with "name", "options" and "expect"`);
  if (typeof raw.name !== "string" || !NAME.test(raw.name))
    throw new BadInput(`${where}: "name" must be lower-case letters, digits, '.', '_' or '-' (it names a directory), got ${JSON.stringify(raw.name)}`);
  const at = `configuration "${raw.name}"`;
  unknownKeys(raw, ["name", "description", "options", "expect"], at);
  if (raw.description !== undefined && typeof raw.description !== "string") throw new BadInput(`${at}: "description" must be a string`);
  if (raw.options !== undefined && !isObject(raw.options)) throw new BadInput(`${at}: "options" must be an object of the options of fencecheck test, e.g. {"nemesis": "partition", "fence": "off"}`);
  const options: Record<string, OptionValue> = {};
  for (const [k, v] of Object.entries(raw.options ?? {})) {
    if (typeof v !== "string" && typeof v !== "number" && typeof v !== "boolean" && !(Array.isArray(v) && v.every((s) => typeof s === "string" || typeof s === "number")))
      throw new BadInput(`${at}: option "${k}" must be a string, a number, true/false or a list, got ${JSON.stringify(v)}`);
    options[k] = Array.isArray(v) ? v.map(String) : v;
  }
  const config: Configuration = { name: raw.name, description: raw.description ?? "", options, expect: parseExpectation(raw.expect, at) };
  // The same parser and builder as test:jepsen: whatever it refuses, the matrix refuses.
  testOf(config, {});
  return config;
}

function parseExpectation(raw: unknown, at: string): Expectation {
  if (raw === "valid") return { kind: "valid" };
  if (raw === "observe") return { kind: "observe" };
  const hint = `"expect" must be "valid", "observe", {"valid": {"exercised": <minimum share of runs with a stale write refused, 0-1>}} or {"find": {"<anomaly type>": <minimum detection rate, 0-1>}}`;
  if (!isObject(raw)) throw new BadInput(`${at}: ${hint}, got ${JSON.stringify(raw)}`);
  unknownKeys(raw, ["find", "valid"], `${at}, "expect"`);
  if ("valid" in raw) {
    if (Object.keys(raw).length > 1 || !isObject(raw.valid)) throw new BadInput(`${at}: ${hint}`);
    unknownKeys(raw.valid, ["exercised"], `${at}, "expect", "valid"`);
    const share = raw.valid.exercised;
    if (typeof share !== "number" || !(share > 0 && share <= 1)) throw new BadInput(`${at}: "exercised" must be a number above 0 and at most 1, got ${JSON.stringify(share)}`);
    return { kind: "valid", exercised: share };
  }
  if (!isObject(raw.find) || Object.keys(raw.find).length === 0) throw new BadInput(`${at}: ${hint}`);
  const find: Partial<Record<AnomalyType, number>> = {};
  for (const [type, rate] of Object.entries(raw.find)) {
    if (!(ANOMALY_TYPES as readonly string[]).includes(type)) throw new BadInput(`${at}: "expect" names an unknown anomaly type ${JSON.stringify(type)}; choose from ${ANOMALY_TYPES.join(", ")}`);
    if (typeof rate !== "number" || !(rate > 0 && rate <= 1)) throw new BadInput(`${at}: the detection rate of ${type} must be a number above 0 and at most 1, got ${JSON.stringify(rate)}`);
    find[type as AnomalyType] = rate;
  }
  return { kind: "find", find };
}

export interface RunOverrides {
  timeLimitS?: number;
  /** npm run soak --deploy: where every configuration's servers run. */
  deploy?: "local" | "docker";
  seed?: number;
  store?: string;
  /** npm run soak --metrics-port: every run serves its metrics there in turn. */
  metricsPort?: number;
}

/** The argument list of `test:jepsen` for one run of a configuration. */
export function argvOf(config: Configuration, overrides: RunOverrides): string[] {
  const argv: string[] = [];
  for (const [name, value] of Object.entries(config.options)) {
    if (SOAK_OWNED.has(name)) throw new BadInput(`configuration "${config.name}": option "${name}" is set by the soak for each run (--seed, --store, --metrics-port of fencecheck soak)`);
    if (name === "time-limit" && overrides.timeLimitS !== undefined) continue;
    if (name === "deploy" && overrides.deploy !== undefined) continue;
    const spec = TEST_OPTIONS.find((s) => s.name === name);
    if (!spec) throw new BadInput(`configuration "${config.name}": unknown option "${name}"${didYouMean(name, TEST_OPTIONS.map((s) => s.name))} (fencecheck test --help lists them)`);
    if (typeof value === "boolean") {
      if (spec.kind === "flag") {
        if (value) argv.push(`--${name}`);
        continue;
      }
      if (spec.kind !== "on-off") throw new BadInput(`configuration "${config.name}": option "${name}" takes a ${spec.kind}, not ${value}`);
      argv.push(`--${name}`, value ? "on" : "off");
    } else argv.push(`--${name}`, Array.isArray(value) ? value.join(",") : String(value));
  }
  if (overrides.timeLimitS !== undefined) argv.push("--time-limit", String(overrides.timeLimitS));
  if (overrides.deploy !== undefined) argv.push("--deploy", overrides.deploy);
  if (overrides.seed !== undefined) argv.push("--seed", String(overrides.seed));
  if (overrides.store !== undefined) argv.push("--store", overrides.store);
  if (overrides.metricsPort !== undefined) argv.push("--metrics-port", String(overrides.metricsPort));
  return argv;
}

/** The test a run of `config` would be, or BadInput naming the configuration. */
export function testOf(config: Configuration, overrides: RunOverrides): ReturnType<typeof buildTest> {
  const argv = argvOf(config, overrides);
  try {
    const { options, positional } = parseArgs(argv, TEST_OPTIONS);
    noPositional(positional);
    return buildTest(options);
  } catch (err) {
    if (err instanceof BadInput) throw new BadInput(`configuration "${config.name}": ${err.message}`);
    throw err;
  }
}

/** The configurations --only names, in the matrix's order; an unknown name is bad input. */
export function selectConfigurations(matrix: Matrix, only: readonly string[] | undefined): Configuration[] {
  if (!only) return matrix.configurations;
  const names = new Set(matrix.configurations.map((c) => c.name));
  for (const n of only) if (!names.has(n)) throw new BadInput(`--only: ${matrix.source} has no configuration ${JSON.stringify(n)}; it has ${[...names].join(", ")}`);
  return matrix.configurations.filter((c) => only.includes(c.name));
}

/**
 * Run `index` of configuration `name` in a soak seeded with `soakSeed`: a pure
 * function of the three, so any run can be repeated alone with test:jepsen --seed,
 * and adding a configuration does not move the seeds of the others.
 */
export function runSeed(soakSeed: number, name: string, index: number): number {
  const h = createHash("sha256").update(`${soakSeed}/${name}/${index}`).digest();
  return h.readUInt32BE(0) & 0x7fffffff;
}

export function describeExpectation(e: Expectation): string {
  if (e.kind === "valid") return e.exercised === undefined ? "valid" : `valid, fencing used in ≥${Math.round(e.exercised * 100)}%`;
  if (e.kind === "observe") return "nothing (observed)";
  return Object.entries(e.find)
    .map(([t, r]) => `${t} in ≥${Math.round((r as number) * 100)}%`)
    .join(", ");
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function unknownKeys(o: Record<string, unknown>, known: string[], where: string): void {
  for (const k of Object.keys(o)) if (!known.includes(k)) throw new BadInput(`${where}: unknown field ${JSON.stringify(k)}; expected ${known.map((s) => JSON.stringify(s)).join(", ")}`);
}
