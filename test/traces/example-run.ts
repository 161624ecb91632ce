// What the OpenTelemetry example tests share (examples/otel/python and java): a
// real redis-server, the example's environment built as fencecheck builds an
// adapter's (clients/program/environment.ts, in fencecheck's cache), one demo run
// exporting to the test's OTLP receiver, and `fencecheck traces` on what it got.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "vitest";
import { ProcessGroup } from "../../cluster/processes.ts";
import { PortPlan } from "../../cluster/ports.ts";
import { startRedisNodes } from "../../backends/redis/server.ts";
import { buildEnvironment, environmentVariables, ecosystemOf } from "../../clients/program/environment.ts";
import { runCli, tempDir, tempRunDir } from "../helpers.ts";
import { otlpReceiver } from "./otlp-receiver.ts";

export interface Redis {
  endpoint: string;
  ports: PortPlan;
  stop: () => Promise<void>;
}

/** One redis-server on a free port of this machine. */
export async function startRedis(): Promise<Redis> {
  const dir = tempRunDir("fc-otel-example-");
  const group = new ProcessGroup(dir);
  const ports = new PortPlan(0);
  const [node] = await startRedisNodes(group, ports, 1, { runDir: dir });
  return { endpoint: `${node.host}:${node.port}`, ports, stop: () => group.stopAll().finally(() => ports.release()) };
}

/** The example's environment (a requirements file's venv, a pom's jars and compiled sources), built once into fencecheck's cache: its variables, and how long the build took. */
export async function exampleEnvironment(file: string): Promise<{ dir: string; env: Record<string, string>; seconds: number; built: boolean }> {
  const lines: string[] = [];
  const built = await buildEnvironment(`the example beside ${file}`, file, (l) => lines.push(l));
  if (!built.ok) throw new Error(built.message);
  process.stderr.write(`${lines.join("\n")}${lines.length ? "\n" : ""}`);
  return { dir: built.dir, env: environmentVariables(ecosystemOf(file)!, built.dir, process.env), seconds: built.seconds, built: built.built };
}

export interface Span {
  name: string;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  attributes: Record<string, string | number | boolean>;
}

export interface ExampleRun {
  /** The demo's exit code and its output. */
  demo: { code: number | null; out: string; err: string };
  /** fencecheck traces' exit code, its output and the run directory it wrote. */
  code: number | null;
  out: string;
  dir: string;
  /** run.json of that run. */
  run: { traces: { processes: Record<string, unknown>; gaps: Record<string, number> } };
  /** Every span the receiver got, flattened. */
  spans: Span[];
}

/** The holds the demo wrote and released, from its last line ("... per thread: [3, 4, 2]"). */
export const counted = (out: string): number => (out.match(/per thread: \[([\d, ]*)\]/)?.[1] ?? "").split(",").reduce((a, n) => a + Number(n), 0);

const value = (v: Record<string, unknown>) => (v.stringValue ?? v.boolValue ?? (v.intValue !== undefined ? Number(v.intValue) : v.doubleValue)) as string | number | boolean;

/** Runs `command` (the demo, with --redis and --otlp added) to its end, then `fencecheck traces` on what the receiver wrote. */
export async function runExample(command: string[], cwd: string, env: Record<string, string>, redis: Redis, timeoutMs: number): Promise<ExampleRun> {
  const file = join(tempDir("fc-otel-spans-"), "spans.json");
  const receiver = await otlpReceiver(await redis.ports.take(), file);
  let demo: ExampleRun["demo"];
  try {
    const child = spawn(command[0], [...command.slice(1), "--redis", redis.endpoint, "--otlp", receiver.url], { cwd, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (err += d));
    const killer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    const code = await new Promise<number | null>((resolve) => child.on("close", (c) => resolve(c)));
    clearTimeout(killer);
    demo = { code, out, err };
  } finally {
    await receiver.close();
  }
  expect(demo.code, demo.out + demo.err).toBe(0);
  expect(receiver.requests()).toBeGreaterThan(0);
  const spans: Span[] = readFileSync(file, "utf8")
    .trim()
    .split("\n")
    .flatMap((l) => JSON.parse(l).resourceSpans)
    .flatMap((rs: { scopeSpans: Array<{ spans: Array<Span & { attributes: Array<{ key: string; value: Record<string, unknown> }> }> }> }) => rs.scopeSpans.flatMap((ss) => ss.spans))
    .map((s: Span & { attributes: Array<{ key: string; value: Record<string, unknown> }> }) => ({ ...s, attributes: Object.fromEntries(s.attributes.map((a) => [a.key, value(a.value)])) }));
  const cli = runCli("traces", ["--store", tempDir("fc-otel-store-"), file]);
  const code = await cli.exit;
  const dir = cli.stdout().match(/^Run directory: (.*)$/m)?.[1];
  expect(dir, cli.stdout() + cli.stderr()).toBeDefined();
  return { demo, code, out: cli.stdout() + cli.stderr(), dir: dir!, run: JSON.parse(readFileSync(join(dir!, "run.json"), "utf8")), spans };
}

/**
 * What a correct run's spans must show, whatever the language: the verdict
 * VALID; one process per thread; every ok acquire's hold released, in a trace of
 * its own whose root is the acquire, the hold's renews, write and release its
 * children and the store's decision the write's; holds as many as the demo counted.
 */
export function expectValidHolds(r: ExampleRun, threads: number, holdsCounted: number): void {
  expect([r.code, r.out]).toEqual([0, expect.stringMatching(/^VALID {2}fenced-write on traces/m)]);
  expect(r.out).toContain("0 hold(s) with no release span, 0 operation(s) of a hold with no acquire span, 0 ok write(s) with no decision, 0 decision(s) with no write span");
  expect(Object.keys(r.run.traces.processes)).toHaveLength(threads);
  const named = (n: string) => r.spans.filter((s) => s.name === n);
  const acquired = named("lock.acquire").filter((s) => s.attributes["lock.outcome"] === "ok");
  expect(acquired.length).toBe(holdsCounted);
  expect(acquired.length).toBeGreaterThanOrEqual(threads);
  const byId = new Map(r.spans.map((s) => [s.spanId, s]));
  for (const a of acquired) {
    expect(a.parentSpanId ?? "").toBe("");
    expect(a.attributes).toMatchObject({ "lock.key": expect.any(String), "lock.owner": expect.any(String), "lock.fence": expect.any(Number), "lock.ttl_ms": expect.any(Number), "thread.id": expect.anything() });
    const children = r.spans.filter((s) => s.parentSpanId === a.spanId);
    expect(children.every((s) => s.traceId === a.traceId && s.attributes["lock.owner"] === a.attributes["lock.owner"])).toBe(true);
    const release = children.filter((s) => s.name === "lock.release");
    expect(release.map((s) => s.attributes["lock.released"])).toEqual([true]);
    const write = children.filter((s) => s.name === "lock.write");
    expect(write.map((s) => s.attributes["lock.outcome"])).toEqual(["ok"]);
    const decision = r.spans.filter((s) => s.parentSpanId === write[0].spanId);
    expect(decision.map((s) => [s.name, s.traceId, s.attributes["lock.decision.accepted"]])).toEqual([["lock.decision", a.traceId, true]]);
  }
  // Every client span of a hold hangs from its acquire: none is left in a trace of its own.
  for (const s of r.spans.filter((s) => ["lock.renew", "lock.release", "lock.write"].includes(s.name))) expect(byId.get(s.parentSpanId ?? "")?.name).toBe("lock.acquire");
}
