// What a run needs installed, from the parts its test is made of: its backend's
// servers where they run here, what its backend's options need, a resource store's
// server, its client's language and library (a reference adapter program), the
// clock nemesis' libfaketime, a container engine for --deploy docker and
// Toxiproxy for --toxiproxy auto, the OpenTelemetry Collector for --otel; an adapter program's environment (a venv,
// Maven's jars, a Go build) is built here too. A first run of the default Redis
// test installs Redis and nothing else.
import { CLOCK, DOCKER, OTELCOL, OTEL_SDK, TOXIPROXY, ensure, type EnsureReport, type Requirement } from "../setup/index.ts";
import { RESOURCE_STORES, type StoreName } from "../backends/index.ts";
import type { Test } from "../core/index.ts";
import { environmentRequirement, isManifestPath, readManifest } from "../clients/program/index.ts";

/** The parts of the machine a test uses. */
export function requirementsOf(test: Test): Requirement[] {
  const needs: Requirement[] = [];
  const deploy = test.serverOptions.deploy;
  const own = test.backend.needs;
  if (deploy === "local" && own) needs.push(own.servers);
  if (deploy === "docker") needs.push(DOCKER);
  // The resource's own store, and what the backend's options start beside its servers, run here whatever --deploy says.
  if (test.resourceStore) needs.push(RESOURCE_STORES[test.resourceStore as StoreName].needs);
  for (const n of own?.options ?? []) if (n.when(test.backendOptions)) needs.push(n.requirement);
  if (deploy === "local" && test.serverOptions.skewableClocks) needs.push(CLOCK);
  // The workers run here whatever --deploy says.
  if (test.workerClocks) needs.push(CLOCK);
  // --toxiproxy auto: Toxiproxy built from its Go module, once, into the cache.
  if (test.toxiproxyAuto) needs.push(TOXIPROXY);
  // --otel: the SDK's npm packages (optional dependencies), and the OpenTelemetry Collector, built from its Go modules, once, into the cache.
  if (test.otel) needs.push(OTEL_SDK, OTELCOL);
  // The language and library of a reference adapter program, wherever the servers run.
  if (test.clientKind?.needs) needs.push(test.clientKind.needs);
  // A user's adapter program's environment, built before anything starts (the preflight starts the program once).
  if (isManifestPath(test.client) && readManifest(test.client).environment) needs.push(environmentRequirement(`environment of ${test.client}`, `--client ${test.client}`, test.client));
  return [...new Map(needs.map((r) => [r.id, r])).values()];
}

/** Everything `tests` use, installed once (a soak asks for all its configurations' at the start). */
export function ensureFor(tests: Test | readonly Test[], say?: (line: string) => void): Promise<EnsureReport> {
  return ensure((Array.isArray(tests) ? tests : [tests as Test]).flatMap((t) => requirementsOf(t)), { say });
}
