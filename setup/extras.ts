// The parts every backend may use, beyond its servers: libfaketime for the clock
// nemesis (with the shim built from source), a container engine for --deploy
// docker, Shopify's Toxiproxy and an OpenTelemetry Collector built from their Go
// modules, GNU time for bench:checker and Chromium for the docs' pictures.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { findLibfaketime } from "../cluster/faketime.ts";
import { repoFile } from "../lib/paths.ts";
import { chromiumBinary, onPath, resolvable, type Requirement } from "./requirements.ts";
import { ensureShim } from "./shim.ts";
import { TOXIPROXY_VERSION, buildToxiproxy, goProblem, toxiproxyBuilt } from "../toxiproxy/index.ts";
import { OTELCOL_VERSION, buildCollector, otelcolBuilt, otelcolGoProblem } from "../otelcol/index.ts";

// The shim that lets libfaketime run inside Debian's redis-server is built from
// source, hence the compiler (setup/shim.ts builds it once into the cache).
export const CLOCK: Requirement = {
  id: "clock",
  serves: "--nemesis clock on local servers, or on the clients' workers with --clock-target clients",
  packages: ["faketime", "gcc", "libc6-dev"],
  present: () => findLibfaketime() !== null && onPath("gcc") && existsSync("/usr/include/stdio.h"),
  async finish(say) {
    try {
      const shim = ensureShim();
      if (shim.built) say(`fencecheck: built the faketime shim ${shim.path}`);
    } catch (err) {
      throw new Error(`--nemesis clock cannot run: ${(err as Error).message}`);
    }
  },
};

/**
 * A container engine with Docker's API: scripts/setup-docker.sh keeps one that
 * answers, or installs and starts Podman with a base image made by debootstrap
 * (no registry is reachable). It returns at once when all is there.
 */
export const DOCKER: Requirement = {
  id: "docker",
  serves: "--deploy docker and the compose lab",
  packages: [],
  present: () => false,
  optional: true,
  async finish() {
    const code = await new Promise<number>((resolve) => {
      const child = spawn("bash", [repoFile("scripts/setup-docker.sh")], { stdio: ["ignore", 2, 2] });
      child.on("error", () => resolve(127));
      child.on("exit", (c) => resolve(c ?? 1));
    });
    if (code !== 0) throw new Error(`setting up a container engine failed (scripts/setup-docker.sh exited ${code}; its messages are above); retry with: fencecheck setup --extras docker`);
  },
};

/**
 * Shopify's Toxiproxy, which has no Debian package: built once from its Go
 * module into the cache (toxiproxy/build.ts), which takes Go 1.23 or newer. A
 * machine without one is told so before anything else is installed (getIt).
 */
export const TOXIPROXY: Requirement = {
  id: "toxiproxy",
  serves: `--toxiproxy auto, the proxy conformance tests and bench:proxy (Shopify's Toxiproxy v${TOXIPROXY_VERSION}, built from its Go module into the cache)`,
  packages: [],
  present: () => toxiproxyBuilt(),
  // Asked only while it is missing: a built Toxiproxy needs no Go.
  get getIt() {
    return toxiproxyBuilt() ? undefined : (goProblem() ?? undefined);
  },
  async finish(say) {
    const done = await buildToxiproxy();
    if (done.built) say(`fencecheck: built Toxiproxy v${TOXIPROXY_VERSION} from its Go module in ${done.seconds.toFixed(1)} s: ${done.path}`);
  },
};

/**
 * fencecheck's OpenTelemetry Collector (otelcol/), built once from its Go
 * modules into the cache: about a minute and a half on two cores, so only for
 * what asks for it (`--otel`, the library tests), never in the default set-up.
 */
export const OTELCOL: Requirement = {
  id: "otelcol",
  serves: `--otel and the trace tests (an OpenTelemetry Collector v${OTELCOL_VERSION}: OTLP receiver, file and OTLP/HTTP exporters, built from its Go modules into the cache; only when named)`,
  packages: [],
  present: () => otelcolBuilt(),
  get getIt() {
    return otelcolBuilt() ? undefined : (otelcolGoProblem() ?? undefined);
  },
  async finish(say) {
    const done = await buildCollector();
    if (done.built) say(`fencecheck: built the OpenTelemetry Collector v${OTELCOL_VERSION} from its Go modules in ${done.seconds.toFixed(1)} s: ${done.path}`);
  },
};

/** What --otel's workers and resource load: optional npm dependencies, pinned exactly in package.json, with @opentelemetry/api their peer. */
const OTEL_SDK_PACKAGES = ["@opentelemetry/api", "@opentelemetry/sdk-trace-base", "@opentelemetry/resources", "@opentelemetry/exporter-trace-otlp-http"];
export const OTEL_SDK: Requirement = {
  id: "otel-sdk",
  serves: `--otel (the OpenTelemetry SDK its workers and resource load: ${OTEL_SDK_PACKAGES.join(", ")})`,
  packages: [],
  present: () => OTEL_SDK_PACKAGES.every((p) => resolvable(p)),
  getIt: "they are optional npm dependencies of fencecheck: run `npm install` where fencecheck is installed, without --omit=optional",
};

export const GNU_TIME: Requirement = { id: "gnu-time", serves: "npm run bench:checker (peak memory of each process)", packages: ["time"], present: () => existsSync("/usr/bin/time") };

/** Only for the docs' pictures (scripts/screenshots.ts): never among what `fencecheck setup` installs unasked. */
export const CHROMIUM: Requirement = { id: "chromium", serves: "npm run docs:images (headless screenshots for docs/images/)", packages: ["chromium"], present: () => onPath(chromiumBinary()), chosenBy: ["FENCECHECK_CHROMIUM"] };
