// `fencecheck setup [--backends LIST] [--extras LIST] [--adapters LIST] [--list]`: installs the Debian
// packages of the parts named, and says what each part needs and whether it is
// there. A run does the same for the parts it uses, so this is for preparing a
// machine ahead (a CI image, a machine without network at run time) and for the
// test suite, which needs everything.
import { EXIT, commandOptions, type OptionSpec } from "../lib/index.ts";
import { BACKEND_NAMES, CLIENT_NEEDS, OPTION_NEEDS, SERVER_NEEDS } from "../backends/index.ts";
import { CHROMIUM, CLOCK, DOCKER, GNU_TIME, OTELCOL, TOXIPROXY, ensure, satisfied, type OnlyTheUserCanInstall, type Requirement } from "../setup/index.ts";

/** What some options need beyond a backend's servers: the clock nemesis, what a backend's options start beside its servers, a container engine, Toxiproxy, the OpenTelemetry Collector, GNU time. */
const EXTRAS: readonly Requirement[] = [CLOCK, ...OPTION_NEEDS, DOCKER, TOXIPROXY, OTELCOL, GNU_TIME];
/** Extras set up only when named (or with --extras all): the collector's build would add a minute and a half to every `npm test`, which does not use it. */
const NAMED_ONLY: readonly Requirement[] = [OTELCOL];
/** The reference adapter programs' environments (each serves one or more --client names). */
const ADAPTERS = CLIENT_NEEDS;
/** Every part, in the order set-up takes them and --list shows them (Chromium only for the docs' pictures: never installed unasked). */
const PARTS: readonly Requirement[] = [...new Map([...Object.values(SERVER_NEEDS), ...EXTRAS, ...ADAPTERS, CHROMIUM].map((r) => [r.id, r])).values()];
const ids = (rs: readonly Requirement[]): string[] => rs.map((r) => r.id);

const USAGE = `Usage: fencecheck setup [--backends LIST] [--extras LIST] [--adapters LIST] [--list]

Installs with apt-get (as root, or through sudo without a password) the Debian
packages that the backends and extras named need and this machine lacks, builds
the environments of the reference adapters named (from their requirements
files and pom.xml, into fencecheck's cache), and prints what it did and how
long it took. With no options: everything the test suite needs (every extra
but ${NAMED_ONLY.map((r) => r.id).join(", ")}, set up only when named). A run installs and
builds what it uses by itself; this prepares a machine ahead.

Backends: ${BACKEND_NAMES.join(", ")}
Extras:   ${EXTRAS.map((e) => `${e.id} (${e.serves})`).join("\n          ")}
Adapters: ${ADAPTERS.map((a) => `${a.id} (${a.builds ?? a.packages.join(" ")})`).join("\n          ")}
          (an adapter's environment is built into fencecheck's cache, not installed)
Exit: 0 everything asked for is there, 1 something could not be installed, 254 bad
arguments, or a part asked for that only you can get (the message says how).`;

export const SETUP_OPTIONS: readonly OptionSpec[] = [
  { name: "backends", kind: "list", default: undefined, choices: [...BACKEND_NAMES, "all", "none"], defaultText: "all when no list is named, else none", help: "the backends to run locally" },
  { name: "extras", kind: "list", default: undefined, choices: [...ids(EXTRAS), "all", "none"], defaultText: `all but ${ids(NAMED_ONLY).join(", ")} when no list is named, else none`, help: "what some options need beyond a backend" },
  { name: "adapters", kind: "list", default: undefined, choices: [...ids(ADAPTERS), "all", "none"], defaultText: "all when no list is named, else none", help: `the reference adapter programs' environments, built from their lock files (${ADAPTERS.map((a) => a.serves).join("; ")})` },
  { name: "list", kind: "flag", default: false, help: "say what each part needs and whether it is there; install nothing" },
];

function pick<T extends string>(given: string[] | undefined, all: readonly T[], fallback: readonly T[]): T[] {
  if (given === undefined) return [...fallback];
  if (given.includes("none")) return [];
  if (given.includes("all")) return [...all];
  return given as T[];
}

export async function main(argv: string[]): Promise<number> {
  const o = commandOptions(argv, SETUP_OPTIONS, USAGE);
  if (!o) return EXIT.valid;
  const everything = o.backends === undefined && o.extras === undefined && o.adapters === undefined;
  // Naming one list asks for what it names alone.
  const backends = pick(o.backends as string[] | undefined, BACKEND_NAMES, everything ? BACKEND_NAMES : []);
  const extras = pick(o.extras as string[] | undefined, ids(EXTRAS), everything ? ids(EXTRAS.filter((e) => !NAMED_ONLY.includes(e))) : []);
  const adapters = pick(o.adapters as string[] | undefined, ids(ADAPTERS), everything ? ids(ADAPTERS) : []);
  const wanted = new Set([...backends.flatMap((b) => (SERVER_NEEDS[b] ? [SERVER_NEEDS[b].id] : [])), ...extras, ...adapters]);
  const parts = PARTS.filter((r) => wanted.has(r.id));
  if (o.list) {
    for (const r of PARTS) {
      const chosen = (r.chosenBy ?? []).filter((v) => process.env[v]);
      const there = r.builds ? (r.present() ? "built" : "not built") : r.present() ? "present" : r.getIt ? "missing, and cannot be had here" : "missing";
      const state = r === DOCKER ? "set up by scripts/setup-docker.sh" : chosen.length ? `yours (${chosen.join(", ")})` : there;
      process.stdout.write(`${r.id.padEnd(17)} ${state.padEnd(34)} ${(r.builds ?? r.packages.join(" ")).padEnd(36)} ${r.serves}\n`);
    }
    return EXIT.valid;
  }
  const say = (line: string): void => void process.stderr.write(`${line}\n`);
  // Asked for everything, the optional parts may fail with a warning: Ubuntu's apt
  // has no postgresql-15, and a machine may have no way to run a container engine.
  const soft = new Set(everything ? ids(parts.filter((r) => r.optional)) : []);
  const already = ids(parts.filter((r) => (r.packages.length > 0 || r.builds) && satisfied(r)));
  try {
    const report = await ensure(parts, { say, soft });
    for (const w of report.warnings) say(`fencecheck setup: warning: ${w}`);
    if (already.length) say(`fencecheck setup: already there: ${already.join(", ")}`);
    // What took the time: apt's packages, or only builds (Toxiproxy, environments), which add no package.
    const spent = report.installed.length ? `apt added ${report.installed.length} packages; ${report.seconds.toFixed(1)} s in all` : `built in ${report.seconds.toFixed(1)} s`;
    say(`fencecheck setup: ready for ${ids(parts).join(", ") || "nothing"}${report.seconds >= 0.1 ? ` (${spent})` : ""}`);
    return EXIT.valid;
  } catch (err) {
    if (!(err instanceof Error) || err.name !== "BadInput") throw err;
    say(`fencecheck setup: ${err.message}`);
    // What ensure cannot get by itself (getIt: Go for Toxiproxy, an optional npm
    // dependency) is the user's to fix, like bad arguments; apt failing is not.
    return (err as Partial<OnlyTheUserCanInstall>).onlyTheUser ? EXIT.badInput : 1;
  }
}
