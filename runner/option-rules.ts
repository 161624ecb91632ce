// The rules between the options of `fencecheck test`, each a small named check
// with its message: a combination that would mean nothing, or would not do what
// it says, is refused (254) before anything starts. They read the facts the
// backends declare (a client's fence source, a backend's abilities, its own
// options), never a backend by name; a backend's own rules are in its folder
// (Backend.rules). The first rule that finds something wrong speaks.
import { BadInput, type ParsedOptions } from "../lib/index.ts";
import { CONTROLS_NEEDED } from "../cluster/external.ts";
import { BACKEND_NAMES, BACKEND_OPTIONS, CLIENTS, backendNamed, ownersOf } from "../backends/index.ts";
import type { Backend, ClientKind, OptionRule, OptionsInPlay, Test } from "../core/index.ts";
import type { LockKinds } from "../clients/index.ts";
import type { WorkloadOptions } from "../workloads/index.ts";
import { WHOLE_SERVER, nemesisNamed } from "../nemesis/index.ts";
import { TOXIPROXY_TOXICS } from "../proxy/index.ts";
import { TOXIPROXY_VERSION } from "../toxiproxy/index.ts";

/** The shipped clients a fact is true of, for messages. */
const clientsWith = (fact: (c: ClientKind) => boolean | undefined): string => Object.keys(CLIENTS).filter((name) => fact(CLIENTS[name])).join(", ");
const backendsWith = (fact: (b: Backend) => unknown): string[] => BACKEND_NAMES.filter((name) => fact(backendNamed(name)!));

/** A lock that issues no fence of its own: an adapter of the user's (known once preflight loads it), or a shipped client that says so. */
const fenceless = (o: OptionsInPlay): boolean => o.clientKind === undefined || o.clientKind.fences === false;

/** The rules that need only the options and the parts they name: before anything is made of them. */
const PART_RULES: readonly OptionRule[] = [
  {
    name: "a client of the backend",
    check: ({ backend, client, clientKind }) =>
      clientKind && !Object.hasOwn(backend.clients, client) ? `--client ${client} does not work with --backend ${backend.name}; choose from ${Object.keys(backend.clients).join(", ")}` : undefined,
  },
  {
    name: "a deployment the backend runs in",
    check: ({ backend, deploy }) => {
      const cannot = deploy === "local" ? undefined : backend.cannot?.[deploy];
      return cannot ? `--deploy ${deploy} does not work with --backend ${backend.name}: ${cannot}` : undefined;
    },
  },
  {
    // Given its default, an option means what leaving it out means, whoever's it is.
    name: "a backend's own options with that backend",
    check: ({ options, backend }) => {
      for (const spec of BACKEND_OPTIONS) {
        const value = options[spec.name];
        if (value === undefined || value === spec.default || (backend.options ?? []).includes(spec)) continue;
        return `--${spec.name} applies to --backend ${ownersOf(spec.name).map((b) => b.name).join(" and ")} only, not ${backend.name}`;
      }
    },
  },
  {
    name: "a backend's client options with those clients",
    check: ({ options, backend, client, clientKind }) => {
      for (const spec of backend.options ?? []) {
        if (!spec.clients || options[spec.name] === undefined || (clientKind && spec.clients.names.includes(client))) continue;
        return `--${spec.name} applies to --client ${spec.clients.names.join(", ")} only (${spec.clients.why}), not --client ${client}`;
      }
    },
  },
  {
    name: "a backend's own rules",
    check: (o) => {
      for (const rule of o.backend.rules ?? []) {
        const wrong = rule.check(o);
        if (wrong) return wrong;
      }
    },
  },
  {
    // A service that finds its servers otherwise (DynamoDB: the AWS environment) takes --endpoints or not.
    name: "the servers of an external deployment",
    check: ({ options, backend, deploy }) =>
      deploy === "external" && options.endpoints === undefined && backend.external?.serversFrom === undefined
        ? `--deploy external needs --endpoints: the servers of your ${backend.name} (${backend.serverNames.join(", ")})`
        : undefined,
  },
  {
    name: "endpoints only where the servers are yours",
    check: ({ options, deploy }) =>
      deploy !== "external" && options.endpoints !== undefined ? `--endpoints names servers of your own, for --deploy external; with --deploy ${deploy} fencecheck starts its own` : undefined,
  },
  {
    // Given without --nemesis clock it would move nothing.
    name: "a clock target for a clock nemesis",
    check: ({ options, nemeses }) =>
      options["clock-target"] !== undefined && !nemeses.includes("clock")
        ? `--clock-target ${options["clock-target"]} says whose clocks --nemesis clock moves, and this run has no clock nemesis (--nemesis ${nemeses.length ? nemeses.join(",") : "none"})`
        : undefined,
  },
];

/** Where the Toxiproxy came from, for the rules that compare them. */
export interface ToxiproxyGiven {
  /** --toxiproxy, checked. */
  given: string | null;
  /** The "toxiproxy" of the --endpoints file. */
  inEndpoints: string | null;
  endpoints: string | null;
}

interface Made {
  test: Test;
  options: ParsedOptions;
  toxiproxy: ToxiproxyGiven;
}

/**
 * The toxics of the backend's own that the run will put on its members' peer
 * proxies, each with why: only when it cuts its members apart through them
 * (memberPartitions, the same fact the backend's start reads).
 */
export function toxicsNeeded(test: Pick<Test, "backend" | "serverOptions">): Array<[string, string]> {
  return test.serverOptions.memberPartitions === "proxy" ? Object.entries(test.backend.needsToxics ?? {}) : [];
}

/** Why a Toxiproxy that lacks a toxic the run needs cannot serve it. */
export function lacksToxicMessage(test: Pick<Test, "backend">, named: string, type: string, why: string, how = ""): string {
  return (
    `${named} does not know the ${type} toxic${how}, and --backend ${test.backend.name} needs it for ${why}. ` +
    `Leave out --toxiproxy to use fencecheck's own fault proxy, or point it at one (fencecheck proxy --port N)`
  );
}

/** The rules between what the options made: the test as it would run. */
const TEST_RULES: readonly { name: string; check(m: Made): string | undefined }[] = [
  {
    name: "one Toxiproxy",
    check: ({ toxiproxy: { given, inEndpoints, endpoints } }) =>
      given && inEndpoints && given !== inEndpoints ? `--toxiproxy ${given} and the Toxiproxy of --endpoints ${endpoints} ("toxiproxy": ${inEndpoints}) differ; give one, or the same in both` : undefined,
  },
  {
    name: "a Toxiproxy to find the user's proxies on",
    check: ({ test, toxiproxy }) => {
      const behind = test.serverOptions.external?.find((s) => s.proxy);
      if (!behind || test.toxiproxy) return undefined;
      return test.toxiproxyAuto
        ? `--endpoints ${toxiproxy.endpoints}: ${behind.name} is behind your proxy ${JSON.stringify(behind.proxy)}, and the Toxiproxy auto starts for the run has none of your proxies: give your Toxiproxy's URL ("toxiproxy" in the file, or --toxiproxy URL)`
        : `--endpoints ${toxiproxy.endpoints}: ${behind.name} is behind your proxy ${JSON.stringify(behind.proxy)}, and no Toxiproxy is given to find it on ("toxiproxy" in the file, or --toxiproxy URL)`;
    },
  },
  {
    // Behind a proxy of the user's every worker reaches the server through that one
    // proxy, so a fault there reaches all of them: a partition can cut the server off
    // from every worker (isolate-one, isolate-leader) but not from some, and latency
    // slows every worker's requests to it (the history's events say so). Pauses, kills
    // and server pauses do not go through links.
    name: "partitions behind a proxy every worker shares",
    check: ({ test }) => {
      const behind = (test.serverOptions.external ?? []).filter((s) => s.proxy).map((s) => `${s.name} (${s.proxy})`);
      if (!behind.length || !test.nemeses.includes("partition")) return;
      const split = test.nemesisOptions.grudges.filter((g) => !(WHOLE_SERVER as readonly string[]).includes(g));
      if (split.length)
        return (
          `--partition ${split.join(",")} cuts some workers off from a server and not others, and ${behind.join(", ")} ${behind.length === 1 ? "is" : "are"} behind a proxy of yours that every worker shares; ` +
          `give --partition ${WHOLE_SERVER.join(",")} (a server cut off from every worker), or leave "proxy" out so that fencecheck makes a proxy per worker`
        );
    },
  },
  {
    name: "faults an external cluster's servers can take",
    check: ({ test }) => {
      const external = test.serverOptions.external;
      if (!external) return;
      for (const n of test.nemeses) {
        if (n === "clock" && test.nemesisOptions.clockTarget === "servers")
          return `--nemesis clock cannot move the clocks of an external cluster's servers (--clock-target clients moves the clients' clocks instead)`;
        for (const verb of CONTROLS_NEEDED[n] ?? []) {
          const without = external.find((s) => !s.control?.[verb]);
          if (without) return `--nemesis ${n} needs a "${verb}" control command for every server, and ${without.name} has none (give them in the --endpoints JSON file)`;
        }
      }
    },
  },
  {
    name: "link faults need links",
    check: ({ test }) => {
      if (!test.directLinks) return;
      const needs = test.nemeses.filter((n) => nemesisNamed(n)?.aims === "links");
      if (needs.length) return `--links direct: --nemesis ${needs.join(",")} works on the proxied links, and direct links have none (drop it, or use --links proxy)`;
    },
  },
  {
    // Known from the options alone, before a run installs or builds anything for it.
    name: "--toxiproxy auto has the toxics the run needs",
    check: ({ test }) => {
      if (!test.toxiproxyAuto) return;
      const lacking = toxicsNeeded(test).find(([type]) => !(TOXIPROXY_TOXICS as readonly string[]).includes(type));
      return lacking ? lacksToxicMessage(test, `--toxiproxy auto (Toxiproxy v${TOXIPROXY_VERSION})`, ...lacking) : undefined;
    },
  },
  {
    // What otel/index.ts makes spans of: a mutex's acquire, renew and release, and
    // fenced writes. A read, a withdrawn wait or another kind's hold would reach
    // the history and not the trace, and the two verdicts would differ for that alone.
    name: "what --otel traces",
    check: ({ test }) => {
      if (!test.otel) return;
      const w = test.workloadOptions;
      const why = test.workload.name !== "fenced-write" ? `--workload ${test.workload.name}` : w.lock.kind !== "mutex" ? `--lock ${w.lock.kind}` : w.fenceReads ? "--fence-reads" : w.cancelRate > 0 ? `--cancel-rate ${w.cancelRate}` : undefined;
      return why ? `--otel traces a mutex's acquires, renews, releases and fenced writes (--workload fenced-write, --lock mutex, no --fence-reads, no --cancel-rate), and ${why} does more: drop one or the other` : undefined;
    },
  },
  {
    name: "a Toxiproxy needs links",
    check: ({ test, toxiproxy }) =>
      test.directLinks && (test.toxiproxy || test.toxiproxyAuto)
        ? `--links direct makes no links, so a Toxiproxy (${toxiproxy.given ? "--toxiproxy" : `--endpoints ${toxiproxy.endpoints}`}) has nothing to do; give one or the other`
        : undefined,
  },
  {
    name: "the freezer is a container's",
    check: ({ test }) =>
      test.serverOptions.pauseMode === "freeze" && test.serverOptions.deploy !== "docker"
        ? `--pause-mode freeze needs --deploy docker (the freezer is a container's cgroup); local servers are paused with SIGSTOP`
        : undefined,
  },
  {
    name: "member partitions on a container network",
    check: ({ test }) => {
      if (test.nemesisOptions.partitionMode !== "network") return;
      if (test.serverOptions.deploy !== "docker") return `--partition-mode network needs --deploy docker: it cuts members off the run's container network`;
      if (!test.backend.members)
        return `--partition-mode network cuts the members of ${backendsWith((b) => b.members).join(" or ")} off each other; --backend ${test.backend.name} has no member-to-member traffic (use timeout or reset)`;
    },
  },
  {
    name: "fault durations in order",
    check: ({ test, options }) => {
      const n = test.nemesisOptions;
      const shown = (name: string, v: number) => `--${name} (${v}${options[name] === undefined ? ", from --ttl" : ""})`;
      if (n.faultMinMs > n.faultMaxMs) return `${shown("fault-min", n.faultMinMs)} must not exceed ${shown("fault-max", n.faultMaxMs)}`;
      if (n.pauseMinMs > n.pauseMaxMs) return `${shown("pause-min", n.pauseMinMs)} must not exceed ${shown("pause-max", n.pauseMaxMs)}`;
    },
  },
  {
    // An ability of the backend's servers: a nemesis aimed at the workers needs none of them.
    name: "nemeses the backend's servers can take",
    check: ({ test }) => {
      for (const n of test.nemeses) {
        const kind = nemesisNamed(n)!;
        const need = (kind.aimsAt?.({ clockTarget: test.nemesisOptions.clockTarget }) ?? kind.aims) === "workers" ? undefined : kind.needs;
        if (need && !(test.backend.abilities ?? []).includes(need))
          return `--nemesis ${n} does not work with --backend ${test.backend.name}: ${test.backend.lacks?.[need] ?? `its servers cannot ${need === "clock" ? "have their clocks moved" : "be killed and restarted"}`}`;
      }
    },
  },
  {
    name: "a pause at re-entry needs re-entries",
    check: ({ test: { workloadOptions: w } }) =>
      w.pauseAt === "reenter" && w.lock.kind !== "reentrant" ? `--pause-at reenter needs --lock reentrant (a hold that enters again), not --lock ${w.lock.kind}` : undefined,
  },
  {
    name: "reads need a workload that reads",
    check: ({ test: { workloadOptions: w, workload } }) => {
      for (const [flag, used] of [["--pause-at read", w.pauseAt === "read"], ["--fence-reads", w.fenceReads]] as const)
        if (used && !workload.reads) return `${flag} needs a workload that reads the resource (counter), not ${workload.name}`;
    },
  },
  {
    name: "a lock kind the client offers",
    check: ({ test }) => {
      const wrong = test.clientKinds ? lockKindsWrong(test.client, test.clientKinds, test.workloadOptions, test.workload.name) : undefined;
      if (!wrong?.startsWith("--lock ") || !test.clientKinds || offersKind(test.clientKinds, test.workloadOptions.lock.kind)) return wrong;
      // The way forward, where the backend has it: another client of its that offers the kind (hazelcast-semaphore beside hazelcast).
      const others = Object.entries(test.backend.clients).filter(([name, c]) => name !== test.client && c.kinds && offersKind(c.kinds, test.workloadOptions.lock.kind));
      return others.length ? `${wrong}; on --backend ${test.backend.name}, ${others.map(([name]) => `--client ${name}`).join(" and ")} offer${others.length === 1 ? "s" : ""} it` : wrong;
    },
  },
  {
    name: "a store's table keeps a mutex's rule",
    check: ({ test: { resourceStore, workloadOptions: w } }) => {
      if (!resourceStore) return;
      if (w.lock.kind !== "mutex") return `--lock ${w.lock.kind} needs --resource memory: the ${resourceStore} resource's table keeps a mutex's rule only (one fence per key, the highest written)`;
      if (w.fenceReads) return `--fence-reads is not supported with --resource ${resourceStore}: its table keeps one fence per key, the highest written`;
    },
  },
  {
    name: "a pause between the replies needs a client that has one",
    check: ({ test }) =>
      test.workloadOptions.pauseAt === "replies" && !test.clientKind?.pausesBetweenReplies
        ? `--pause-at replies applies to --client ${clientsWith((c) => c.pausesBetweenReplies)} only (the others cannot be paused inside an acquire), not --client ${test.client}`
        : undefined,
  },
  {
    name: "fences for a lock that issues none",
    check: ({ test, options }) => {
      const o = inPlay(test, options);
      if (!o.clientKind || o.clientKind.fences !== false || !test.fencing) return;
      const source = test.clientOptions.fenceSource;
      if (source === undefined || source === "none")
        return `--client ${test.client} issues no fencing tokens, so with --fence on the resource would refuse every write as unfenced; use --fence off${test.backend.fenceCounter ? `, or take fences from counters on its servers with --fence-source single (or max-incr)` : ` (--backend ${test.backend.name} has no counters to take fences from)`}`;
    },
  },
  {
    name: "a fence source where there is one",
    check: ({ test, options }) => {
      const o = inPlay(test, options);
      if (options["fence-source"] === undefined || test.clientKind?.fenceFromMajority) return;
      if (!fenceless(o))
        return `--fence-source applies to the clients that make a fence from several servers' counters (${clientsWith((c) => c.fenceFromMajority)}) and to a lock that issues none; --client ${test.client} of --backend ${test.backend.name} issues its own fences`;
      if (!test.backend.fenceCounter)
        return `--fence-source takes fences from counters on the backend's servers: with --client ${test.client} it needs a backend that has them (${backendsWith((b) => b.fenceCounter).join(", ")}), not ${test.backend.name}`;
    },
  },
  {
    name: "no fence with fencing on",
    check: ({ test }) =>
      test.clientKind?.fenceFromMajority && test.clientOptions.fenceSource === "none" && test.fencing
        ? "--fence-source none with --fence on: holds would carry no fencing token, so the resource could only compare owners, and would refuse every write as unfenced; use --fence off, or --fence-source max-incr or single"
        : undefined,
  },
  {
    name: "a shared connection for the clients that can share one",
    check: ({ test, options }) =>
      options.connections === "per-worker" && !test.clientKind?.sharesConnection
        ? `--connections per-worker applies to the clients that can share one (${clientsWith((c) => c.sharesConnection)}) only, not --client ${test.client}: the others keep a connection each`
        : undefined,
  },
];

const inPlay = (test: Test, options: ParsedOptions): OptionsInPlay => ({
  options,
  backend: test.backend,
  client: test.client,
  ...(test.clientKind ? { clientKind: test.clientKind } : {}),
  nemeses: test.nemeses,
  deploy: test.serverOptions.deploy,
});

function first(messages: Iterable<string | undefined>): void {
  for (const m of messages) if (m) throw new BadInput(m);
}

/** The rules on the options and the parts they name; BadInput with the first one's message. */
export function checkParts(o: OptionsInPlay): void {
  first(PART_RULES.map((r) => r.check(o)));
}

/** The rules on the test the options made; BadInput with the first one's message. */
export function checkTest(test: Test, options: ParsedOptions, toxiproxy: ToxiproxyGiven): void {
  first(TEST_RULES.map((r) => r.check({ test, options, toxiproxy })));
}

/** The lock kind and cancellation asked for, against what the client offers (a shipped client's facts, or an adapter's own `kinds`); the message when it is not offered. */
export function lockKindsWrong(client: string, kinds: LockKinds, w: WorkloadOptions, workload: string): string | undefined {
  const offered = ["mutex", ...(kinds.reentrant ? ["reentrant"] : []), ...(kinds.rw ? ["rw"] : []), ...(kinds.semaphore ? ["semaphore:N"] : [])];
  const what = `--client ${client} offers ${offered.join(", ")}${kinds.cancel ? ", and cancels a wait" : ", and cannot cancel a wait"}`;
  const kind = w.lock.kind;
  if (!offersKind(kinds, kind)) return `--lock ${kind === "semaphore" ? `semaphore:${w.lock.permits}` : kind}: ${what}`;
  if (w.cancelRate > 0 && !kinds.cancel) return `--cancel-rate ${w.cancelRate}: ${what}`;
  if (w.cancelRate > 0 && w.acquireTimeoutMs === 0) return `--cancel-rate ${w.cancelRate} with --acquire-timeout 0: an acquire that does not wait has no wait to withdraw`;
  if (kind !== "mutex" && workload !== "fenced-write") return `--lock ${kind} needs --workload fenced-write (the ${workload} workload is a mutex's)`;
}

/** Whether a client of these kinds serves an acquire of this lock kind (every client serves a mutex). */
function offersKind(kinds: LockKinds, kind: WorkloadOptions["lock"]["kind"]): boolean {
  return kind === "mutex" || Boolean(kind === "semaphore" ? kinds.semaphore : kind === "rw" ? kinds.rw : kinds.reentrant);
}

/** The same, as bad input (preflight, once an adapter's kinds are known). */
export function lockKindsOffered(client: string, kinds: LockKinds, w: WorkloadOptions, workload: string): void {
  first([lockKindsWrong(client, kinds, w, workload)]);
}
