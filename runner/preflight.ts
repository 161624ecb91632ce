// Before a run starts anything: is --metrics-port free? Is a --client module a
// lock client adapter that fits the backend? With --deploy docker, does a container engine answer?
// With --deploy external on a service that needs an account (DynamoDB), are the
// region, the credentials and the permissions there? With --toxiproxy, is there a Toxiproxy at that URL,
// does it have the toxics the backend needs, and the proxies of the user's that
// --endpoints names? All are facts about the user's options, so a no is bad input
// (254) with nothing started or stored, instead of a failure half-way through
// starting a cluster.
import { Toxiproxy, ToxiproxyError } from "toxiproxy-node-client";
import { BadInput } from "../lib/index.ts";
import type { Test } from "../core/index.ts";
import { isAdapterPath, loadAdapter, checkAdapterClient } from "../clients/index.ts";
import { isManifestPath, readManifest } from "../clients/program/index.ts";
import { checkUserProxies } from "../cluster/external-proxies.ts";
import { checkMetricsPort } from "./metrics.ts";
import { lacksToxicMessage, lockKindsOffered, toxicsNeeded } from "./option-rules.ts";

/** A client adapter of the user's: its exports, its backends, its fences, one client made and closed. */
async function checkAdapter(test: Test): Promise<void> {
  const adapter = await loadAdapter(test.client);
  if (!adapter.backends.includes(test.backend.name))
    throw new BadInput(`--client ${test.client} works with --backend ${adapter.backends.join(", ")} (its "backends"), not --backend ${test.backend.name}`);
  const source = test.clientOptions.fenceSource;
  if (adapter.fences && source !== undefined)
    throw new BadInput(`--client ${test.client} issues its own fencing tokens (its "fences" is true), so --fence-source ${source} would mean nothing`);
  if (test.fencing && !adapter.fences && (source === undefined || source === "none"))
    throw new BadInput(
      `--client ${test.client} issues no fencing tokens (its "fences" is false), so with --fence on the resource would refuse every write as unfenced; ` +
        `use --fence off${test.backend.fenceCounter ? ", or take fences from counters on its servers with --fence-source single (or max-incr)" : ` (--backend ${test.backend.name} has no counters to take fences from)`}`,
    );
  lockKindsOffered(test.client, adapter.kinds ?? {}, test.workloadOptions, test.workload.name);
  test.clientKinds = adapter.kinds ?? {};
  await checkAdapterClient(adapter, test.client, test.backend.serverNames.length);
}

/**
 * --clock-target clients reaches an adapter program through the environment it
 * inherits from its worker (libfaketime's preload and offset file): a manifest
 * whose "env" sets those would run the program on a clock the nemesis cannot move.
 */
function checkProgramClock(test: Test): void {
  if (!test.workerClocks || !isManifestPath(test.client)) return;
  const set = Object.keys(readManifest(test.client).env).filter((k) => k === "LD_PRELOAD" || k === "DONT_FAKE_MONOTONIC" || k.startsWith("FAKETIME"));
  if (set.length)
    throw new BadInput(
      `--clock-target clients moves the clocks of --client ${test.client}'s programs through the environment they inherit from their worker (libfaketime's LD_PRELOAD and FAKETIME_TIMESTAMP_FILE), and its "env" sets ${set.join(", ")}: drop ${set.length === 1 ? "it" : "them"} from the manifest, or use --clock-target servers`,
    );
}

/** The refusal of a Toxiproxy that lacks a toxic the run needs. */
function lacksToxic(test: Test, named: string, type: string, why: string, how = ""): BadInput {
  return new BadInput(lacksToxicMessage(test, named, type, why, how));
}

/** Warnings go to stderr: the run goes ahead. */
export async function preflight(test: Test, warn: (line: string) => void = (l) => process.stderr.write(`fencecheck: warning: ${l}\n`)): Promise<void> {
  if (test.metricsPort != null) await checkMetricsPort(test.metricsPort);
  checkProgramClock(test);
  if (isAdapterPath(test.client)) await checkAdapter(test);
  if (test.serverOptions.deploy === "docker") {
    // No engine is a fact about this machine and --deploy docker: said before anything starts.
    const { findEngine, NoEngine } = await import("../docker/index.ts");
    await findEngine().catch((err: unknown) => {
      throw err instanceof NoEngine ? new BadInput(err.message) : err;
    });
  }
  // A service of the user's that needs more than addresses (DynamoDB's account and permissions), asked now.
  if (test.serverOptions.external && test.backend.external) await test.backend.external.check(test, warn);
  // --toxiproxy auto: what it lacks is known from its version, and was refused with the options (option-rules.ts).
  const url = test.toxiproxy;
  if (!url) return;
  const toxiproxy = new Toxiproxy(url);
  const named = test.toxiproxyFrom ? `${test.toxiproxyFrom}: "toxiproxy" ${url}` : `--toxiproxy ${url}`;
  try {
    await toxiproxy.getVersion();
  } catch (err) {
    throw new BadInput(`${named}: no Toxiproxy answers there (${err instanceof Error ? err.message : String(err)})`);
  }
  const external = test.serverOptions.external;
  if (external) for (const line of await checkUserProxies(url, external)) warn(line);
  // Asked of the server itself: a user's Toxiproxy may be ours, or another build.
  const needs = toxicsNeeded(test);
  if (needs.length === 0) return;
  // A proxy of our own for the question, removed whatever the answer.
  const probe = await toxiproxy.createProxy({ name: `fc-${process.pid}-preflight`, listen: "127.0.0.1:0", upstream: "127.0.0.1:9" });
  try {
    for (const [type, why] of needs) {
      try {
        await probe.addToxic({ name: `probe-${type}`, type, stream: "upstream", toxicity: 1, attributes: {} } as never);
      } catch (err) {
        if (!(err instanceof ToxiproxyError) || !/status code 400/.test(err.message)) throw err;
        throw lacksToxic(test, `--toxiproxy ${url}`, type, why, " (it answered 400, as a real Toxiproxy does)");
      }
    }
  } finally {
    await probe.remove().catch(() => {});
  }
}
