// docs/locks.md, the safety table: every lock library fencecheck runs, in every
// language, under each fault of the `libraries` preset, with fencing off and on.
// It is made from soaks, never by hand: `npm run docs:locks -- SOAK_DIR...`
// reads each soak's summary.json and, from its run directories, what actually
// ran (the library line an adapter program reported in its init_ok, the npm
// package's version in run.json, the server's), and writes two files:
// docs/locks.json (the soaks' data the page needs, kept in the repository so the
// page can be checked) and docs/locks.md, a pure function of that file and the
// preset (test/docs/locks.test.ts makes it again and fails while they differ).
//
// The page grows soak by soak: `npm run docs:locks -- DIR` adds a soak's rows
// to docs/locks.json, a later soak's configuration replacing an earlier one's,
// so a library added later needs a soak of its own rows only; with no
// directory it makes the page again from the file (after a preset change).
// Preset rows no soak ran are shown as not measured yet, not left out in
// silence, and a row whose options the preset has since changed is dropped.
import { existsSync, readdirSync, readFileSync, realpathSync } from "node:fs";
import { basename, join } from "node:path";
import { BadInput } from "../lib/index.ts";
import { readManifest } from "../clients/program/index.ts";
import { ecosystemOf, type Ecosystem } from "../clients/program/environment.ts";
import { CLIENTS, backendOfClient } from "../backends/index.ts";
import { readSummary } from "./finish.ts";
import { SCENARIOS } from "../scenarios/index.ts";
import { loadPreset, type Configuration } from "./matrix.ts";
import { faultName, faultOf, fenced, fencingText, libraryRows, tellsText, type LibraryRow } from "./libraries.ts";
import type { ConfigSummary } from "./summary.ts";

export const LOCKS_PRESET = "libraries";

/** One soak the page was made from. */
export interface SoakSource {
  dir: string;
  started: string;
  wall_s: number;
  seed: number;
  verdict: string;
  fencecheck: string;
}

/** What ran for a client, read from its runs. */
export interface ClientFacts {
  language: string;
  backend: string;
  /** The library and version that ran: an adapter's init_ok line, the npm package's version, or fencecheck's own recipe. */
  library: string;
  /** The server it ran against, as run.json's versions name it. */
  server: string;
  /** The client's own description when the page was made. */
  describe: string;
  /** Whether its lock issues fences of its own (false: fencing took them from --fence-source). */
  fences: boolean;
}

/** A configuration as the page needs it: what libraryRows reads, and each run's command. */
export interface PageConfig extends Pick<ConfigSummary, "name" | "description" | "options" | "expect" | "counts" | "anomalies" | "exercised"> {
  lost_holds?: ConfigSummary["lost_holds"];
  /** Index in `soaks`. */
  soak: number;
  runs: Array<{ seed: number; status: string; anomaly_types: string[]; argv: string[] }>;
}

export interface LocksData {
  format: 1;
  kind: "locks-page";
  soaks: SoakSource[];
  clients: Record<string, ClientFacts>;
  configurations: PageConfig[];
}

/** The language the lock library is written in: its adapter program's environment says (a pom.xml is Java, a go.mod Go, a requirements file Python); a client without one runs in fencecheck's Node. */
const LANGUAGES: Record<Ecosystem, string> = { python: "Python", maven: "Java", go: "Go" };
function languageOf(client: string): string {
  const manifest = CLIENTS[client]?.program;
  const environment = manifest ? readManifest(manifest).environment : undefined;
  const ecosystem = environment ? ecosystemOf(environment) : null;
  return ecosystem ? LANGUAGES[ecosystem] : "Node";
}

/** The run's command without its store, which was the soak's directory. */
function portableArgv(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--store") i++;
    else out.push(argv[i]);
  }
  return out;
}

/** What ran for `client`, from the first of its run directories that says. */
function factsOf(client: string, soakDir: string, runDirs: string[]): ClientFacts {
  const kind = CLIENTS[client];
  const backend = backendOfClient(client);
  const facts: ClientFacts = { language: languageOf(client), backend: backend?.name ?? "?", library: "?", server: NOT_RECORDED, describe: kind?.describe ?? "", fences: kind?.fences !== false };
  const serverKey = backend?.serverVersion ?? Object.keys(backend?.versions ?? {})[0];
  for (const rel of runDirs) {
    const dir = join(soakDir, rel);
    if (!existsSync(join(dir, "run.json"))) continue;
    const run = JSON.parse(readFileSync(join(dir, "run.json"), "utf8")) as { versions?: Record<string, string> };
    const versions = run.versions ?? {};
    if (serverKey && versions[serverKey]) facts.server = serverName(serverKey, versions[serverKey]);
    if (kind?.program) {
      const logs = existsSync(join(dir, "logs")) ? readdirSync(join(dir, "logs")).map((f) => readFileSync(join(dir, "logs", f), "utf8")).join("") : "";
      const line = /\] library: (.+)$/m.exec(logs);
      if (line) facts.library = line[1].trim();
    } else if (kind?.package) {
      const v = versions[kind.package];
      if (v) facts.library = `${kind.package} ${v.replace(/^v/, "")}`;
    } else {
      facts.library = `fencecheck's own recipe (fencecheck ${versions.fencecheck ?? "?"})`;
    }
    if (facts.library !== "?" && (facts.server !== NOT_RECORDED || !serverKey)) break;
  }
  return facts;
}

/** A server whose version the soak's runs did not record (run before its backend named it). */
const NOT_RECORDED = "version not recorded";

/** A server's version line, short: its probe's name and the version in it ("redis-server 7.0.15", "etcd 3.4.23"). */
function serverName(key: string, line: string): string {
  const num = /(\d+\.\d+(\.\d+)?)/.exec(line)?.[1];
  return num ? `${key} ${num}` : line;
}

/** Whether a configuration ran with the options its preset row has now. */
const sameRow = (options: Record<string, unknown> | undefined, row: Configuration | undefined): boolean =>
  row !== undefined && JSON.stringify(sortedKeys(options ?? {})) === JSON.stringify(sortedKeys(row.options));

/**
 * The page's data: `previous` (docs/locks.json as it stands, or null) with the
 * soaks in `soakDirs` added, a later soak's configuration replacing an earlier
 * one's. A row of `previous` the preset has since changed or dropped is dropped
 * (`dropped` names it: the page then says it is not measured); a soak's row
 * that is not the preset's row now is refused.
 */
export function locksDataFrom(soakDirs: readonly string[], previous: LocksData | null): { data: LocksData; dropped: string[] } {
  const presetConfigs = new Map(loadPreset(LOCKS_PRESET).configurations.map((c) => [c.name, c]));
  const soaks: SoakSource[] = [...(previous?.soaks ?? [])];
  const byName = new Map<string, PageConfig>();
  const dropped: string[] = [];
  for (const c of previous?.configurations ?? []) {
    if (sameRow(c.options, presetConfigs.get(c.name))) byName.set(c.name, c);
    else dropped.push(c.name);
  }
  const clients: Record<string, ClientFacts> = { ...(previous?.clients ?? {}) };
  const runDirsOf = new Map<string, { soakDir: string; dirs: string[] }>();
  for (const given of soakDirs) {
    const dir = realpathSync(given);
    const s = readSummary(dir, "docs:locks");
    if (s.matrix.name !== LOCKS_PRESET) throw new BadInput(`docs:locks ${given}: a soak of the "${s.matrix.name}" matrix; the page is made from soaks of the ${LOCKS_PRESET} preset`);
    const index = soaks.length;
    soaks.push({ dir: basename(dir), started: s.started, wall_s: s.wall_s, seed: s.seed, verdict: s.verdict, fencecheck: fencecheckVersion(dir, s) });
    for (const c of s.configurations) {
      const row = presetConfigs.get(c.name);
      if (!row) throw new BadInput(`docs:locks ${given}: configuration "${c.name}" is not in the ${LOCKS_PRESET} preset`);
      // A row changed since the soak is not the row the page would name: soak it again.
      if (!sameRow(c.options, row))
        throw new BadInput(`docs:locks ${given}: configuration "${c.name}" ran with options ${JSON.stringify(c.options)}, and the preset's row now says ${JSON.stringify(row.options)}: soak it again`);
      const checked = c.runs.filter((r) => ["valid", "invalid", "unknown"].includes(r.status));
      if (checked.length === 0) continue;
      byName.set(c.name, {
        name: c.name,
        description: c.description,
        options: c.options,
        expect: c.expect,
        counts: c.counts,
        anomalies: c.anomalies,
        exercised: c.exercised,
        ...(c.lost_holds ? { lost_holds: c.lost_holds } : {}),
        soak: index,
        runs: checked.map((r) => ({ seed: r.seed, status: r.status, anomaly_types: r.anomaly_types ?? [], argv: portableArgv(r.argv ?? []) })),
      });
      const client = String(c.options?.client ?? "");
      const prev = runDirsOf.get(client);
      const dirs = checked.flatMap((r) => (r.run_dir ? [r.run_dir] : []));
      if (!prev || prev.soakDir !== dir) runDirsOf.set(client, { soakDir: dir, dirs });
      else prev.dirs.push(...dirs);
    }
  }
  // What ran for a client, from the newest soak that ran it.
  for (const [client, where] of runDirsOf) clients[client] = factsOf(client, where.soakDir, where.dirs);
  // Preset order, so that the page does not depend on the order the soaks were given in.
  const order = [...presetConfigs.keys()];
  const configurations = [...byName.values()].sort((a, b) => order.indexOf(a.name) - order.indexOf(b.name));
  const ran = new Set(configurations.map((c) => String(c.options?.client ?? "")));
  for (const client of Object.keys(clients)) if (!ran.has(client)) delete clients[client];
  // Only the soaks some configuration still comes from, renumbered.
  const used = [...new Set(configurations.map((c) => c.soak))].sort((a, b) => a - b);
  const renumber = new Map(used.map((old, i) => [old, i]));
  return {
    data: { format: 1, kind: "locks-page", soaks: used.map((i) => soaks[i]), clients, configurations: configurations.map((c) => ({ ...c, soak: renumber.get(c.soak)! })) },
    dropped,
  };
}

const sortedKeys = (o: Record<string, unknown>): Array<[string, unknown]> => Object.entries(o).sort(([a], [b]) => a.localeCompare(b));

function fencecheckVersion(dir: string, s: { configurations: ConfigSummary[] }): string {
  for (const c of s.configurations)
    for (const r of c.runs) {
      const f = r.run_dir ? join(dir, r.run_dir, "run.json") : "";
      if (f && existsSync(f)) return (JSON.parse(readFileSync(f, "utf8")) as { versions?: { fencecheck?: string } }).versions?.fencecheck ?? "?";
    }
  return "?";
}

/** What to do when a library shows this anomaly without fencing: one sentence, and where the page on it is. */
const ADVICE: Record<string, string> = {
  "stale-write-accepted": "a holder that lost the lock wrote after the next one: check the lock's fence at the resource, refusing any write whose fence is lower than the highest it has accepted",
  "interleaved-writers": "two holders' writes interleaved: fence the resource, so that the older holder's writes are refused once the newer one has written",
  "lost-update": "a read-modify-write lost an update: fence the reads as well as the writes (--fence-reads), so that a stale holder cannot read, then write",
  "mutex-violation": "two holds were valid at once by the lock's own promise: the lock is broken under this fault; fencing protects the data, not the lock's promise",
  "fence-regression": "a later hold got a lower fence: take fences from a counter that is bumped in the same step as the grant, or fencing will refuse the wrong writer",
  "duplicate-fence": "two holds shared a fence: the resource cannot tell them apart; take fences from a counter bumped with each grant",
  "lost-lock-unnoticed": "a renew succeeded after the lock had passed to another: renew with an owner check, and treat a failed renew as a lost lock",
  "expired-on-arrival": "the lock was granted with its lease already spent: check the remaining validity after acquiring, and do not work on a spent lease",
};

/** What a fault itself breaks, whatever the anomaly: the server's memory, its clock, the client's clock. */
const FAULT_ADVICE: Record<string, string> = {
  kill: "the server forgot its keys and its fence counter when it restarted: keep them on disk with an fsync on every write (an append-only file synced always), or take fences from a store that does",
  clock: "a server's clock stepped and its keys expired early: keep the servers' clocks from stepping (slew them, as chrony does), or use a lock whose lease the server measures on a monotonic clock",
  "clock (clients)": "the library judged a lease by its own wall clock: a client's clock that steps makes it hold, or take, a lease the servers did not give; the fence still refuses its writes",
};

const cell = (s: string): string => s.replace(/\|/g, "\\|");
const code = (argv: readonly string[]): string => "`npx fencecheck test " + argv.join(" ") + "`";
const anchor = (client: string): string => `client-${client.toLowerCase().replace(/[^a-z0-9-]/g, "")}`;

/** The fault a configuration injects, as its name gives it (pause, latency, partition+pause, ...). */

function verdictCell(c: PageConfig | undefined): string {
  if (!c) return "not measured yet";
  const runs = c.runs.length;
  const invalid = c.runs.filter((r) => r.status === "invalid").length;
  const unknown = c.runs.filter((r) => r.status === "unknown").length;
  const types = Object.entries(c.anomalies).map(([t, n]) => `${t} ${n}/${runs}`);
  if (invalid) return `**INVALID** ${invalid}/${runs}: ${types.join(", ")}`;
  if (unknown) return `UNKNOWN ${unknown}/${runs}`;
  const refused = c.exercised?.refused ?? 0;
  return `VALID ${runs}/${runs}${fenced(c) ? `, a stale write refused in ${refused}` : ""}`;
}

/** The page: docs/locks.md, from its data and the preset's clients (those not yet soaked are listed). */
export function renderLocksPage(data: LocksData): string {
  const preset = loadPreset(LOCKS_PRESET).configurations;
  const presetClients = [...new Set(preset.map((c) => String(c.options.client)))];
  // A client the preset runs with fencing off only (the matrix test allows it of a lock with no fence to take) has a row all the same.
  const rows = libraryRows(data.configurations as unknown as ConfigSummary[], (client) => preset.every((c) => c.options.client !== client || c.options.fence === "off"));
  const byClient = new Map(rows.map((r) => [r.client, r]));
  const ordered = presetClients.filter((c) => byClient.has(c));
  const missing = presetClients.filter((c) => !byClient.has(c));
  const out: string[] = [];
  out.push("# Which locks are safe: the safety table");
  out.push("");
  out.push("Every lock library fencecheck runs, in every language, under the faults of");
  out.push("the `libraries` soak preset (pauses that outlive a lease, latency, a");
  out.push("partition with pauses), each with fencing off and with fencing on. Fencing");
  out.push("off shows what the lock alone promises; fencing on shows whether the lock's");
  out.push("fence (or a counter beside it) lets the resource refuse every stale write.");
  out.push("Each INVALID cell has the command that reproduces it (its seed included), and");
  out.push("each anomaly what to do about it. The anomalies are explained in");
  out.push("[anomalies.md](anomalies.md); how a library is run, in");
  out.push("[adapter-protocol.md](adapter-protocol.md).");
  out.push("");
  out.push("This page is generated: `npm run docs:locks -- SOAK_DIR...` makes it from");
  out.push("soaks of the preset (`npx fencecheck soak --preset libraries`), and");
  out.push("[locks.json](locks.json) keeps the data it was made from. Made from:");
  out.push("");
  for (const s of data.soaks)
    out.push(`- soak ${s.dir} (fencecheck ${s.fencecheck}, seed ${s.seed}, ${Math.round(s.wall_s / 60)} min, ${s.verdict})`);
  out.push("");
  out.push("## Summary");
  out.push("");
  out.push("| language | client | library that ran | server | fencing off: anomalies (fault found/runs) | fencing on | tells you it lost the lock |");
  out.push("| --- | --- | --- | --- | --- | --- | --- |");
  for (const client of ordered) {
    const r = byClient.get(client)!;
    const f = data.clients[client];
    const off = Object.entries(r.unfenced).map(([t, w]) => `${t} (${w.join(", ")})`).join("; ") || "none";
    out.push(`| ${f.language} | [${client}](#${anchor(client)}) | ${cell(f.library)} | ${cell(f.server)} | ${cell(off)} | ${cell(fencingText(r))} | ${cell(tellsText(r))} |`);
  }
  if (missing.length) {
    out.push("");
    out.push(`Not yet measured (in the preset, in no soak this page was made from): ${missing.map((c) => `\`${c}\``).join(", ")}.`);
  }
  out.push("");
  out.push("## Each library");
  for (const client of ordered) out.push(...clientSection(client, byClient.get(client)!, data, preset));
  out.push("");
  return out.join("\n");
}

function clientSection(client: string, r: LibraryRow, data: LocksData, preset: readonly Configuration[]): string[] {
  const f = data.clients[client];
  const configs = data.configurations.filter((c) => c.options?.client === client);
  // Every fault the preset has for it, those no soak given ran too: a row added since shows as not measured.
  const rows = preset.filter((c) => c.options.client === client).map((c) => faultName(c.options, c.options.nemesis));
  const faults = [...new Set([...rows, ...configs.map(faultOf)])];
  const out = ["", `### ${client}`, "", `<a id="${anchor(client)}"></a>${f.language}, ${cell(f.library)}, on ${f.backend} (${cell(f.server)}). ${cell(f.describe)}`, ""];
  out.push("| fault | fencing off | fencing on |", "| --- | --- | --- |");
  for (const fault of faults) {
    const off = configs.find((c) => faultOf(c) === fault && !fenced(c));
    const on = configs.find((c) => faultOf(c) === fault && fenced(c));
    out.push(`| ${fault} | ${verdictCell(off)} | ${r.fenceless ? "no fence to take" : verdictCell(on)} |`);
  }
  const unsafe = configs.filter((c) => c.runs.some((x) => x.status === "invalid"));
  if (unsafe.length) {
    out.push("", "Reproduce:", "");
    for (const c of unsafe) {
      const run = c.runs.find((x) => x.status === "invalid")!;
      out.push(`- ${faultOf(c)}, fencing ${fenced(c) ? "on" : "off"} (${run.anomaly_types.join(", ")}): ${code(run.argv)}`);
    }
  }
  // The catalogue's rows for this library: behaviours its users reported, each run at chosen moments.
  const reported = Object.values(SCENARIOS).filter((x) => x.options.client === client);
  if (reported.length) {
    out.push("", "Scenarios (`npx fencecheck scenario ID`, [experiments.md](experiments.md#every-scenario)):", "");
    for (const x of reported) out.push(`- ${x.id}: ${cell(x.title)}`);
  }
  const types = [...new Set(unsafe.flatMap((c) => Object.keys(c.anomalies)))];
  out.push("", "What to do:", "");
  for (const t of types) {
    const under = [...new Set(unsafe.filter((c) => c.anomalies[t]).map(faultOf))];
    out.push(`- [\`${t}\`](anomalies.md#${t}) (${under.join(", ")}): ${ADVICE[t] ?? "see its section"}.`);
  }
  // Where a fault breaks the server (or the clock) rather than the lock's use of it, that is what to fix first.
  for (const f of [...new Set(unsafe.map(faultOf))]) if (FAULT_ADVICE[f]) out.push(`- Under ${f}: ${FAULT_ADVICE[f]}.`);
  const fencedOn = fencingText(r);
  out.push(
    `- With fencing on: ${fencedOn.startsWith("safe") ? "every run was valid: pass the fence" + (!f.fences ? " (this library issues none: fencecheck took one from a counter beside the lock, as `--fence-source` says; do the same)" : " it issues") + " to the resource and have the resource check it" : fencedOn}.`,
  );
  return out;
}

