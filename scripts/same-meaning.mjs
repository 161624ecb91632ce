#!/usr/bin/env node
// Proves that two builds of fencecheck mean the same by a run: a refactor that
// moves and renames modules must leave every verdict, every witness and every
// seeded fault where it was. It drives each build through its command line only
// (`node <dir>/dist/cli/fencecheck.js ...`), never its modules, because the
// "after" build's modules are the ones that move.
//
//   node scripts/same-meaning.mjs --before DIR --after DIR [--part fixtures|runs|all]
//                                 [--seed N] [--time-limit S] [--keep DIR]
//
// DIR is a checkout that has been `npm ci`'d (it has dist/cli/fencecheck.js).
// Exit: 0 everything compared is the same, 1 something differs (or could not be
// compared), 254 bad arguments.
//
// Part 1, fixtures. Every stored run directory of the AFTER checkout (a
// directory holding a history.ndjson, under histories/ or under a fixtures/
// directory below test/; symbolic links such as histories/latest are not
// followed) is copied into a temp directory, one copy per build, and checked by
// each build with `fencecheck check <copy> --out <dir>`. Compared: the exit
// code, and results.json after JSON normalisation (parsed, the fields below
// removed, re-stringified with sorted keys), byte for byte. Where a build
// writes no results.json (bad input, exit 254; the tool failed, exit 255), the
// first line of its stderr is compared instead, with the copy's path replaced
// by <run>. The BEFORE build also checks every fixture a second time: a field
// that differs between two checks by the same build is not a property of the
// build; any such field outside the list below is reported (UNREPEATABLE) and
// makes the exit 1, since it can then prove nothing.
//
// Part 2, live runs. For every --backend and every --nemesis choice (read from
// the BEFORE build's `fencecheck test --help`, which lists each option's
// choices; `none` left out; the AFTER build must have each of them, and a choice
// it adds, a new backend, is named and not compared), each
// build runs, one run at a time, never two at once:
//   fencecheck test --backend B --nemesis N --aim random --seed S --time-limit T --store <tmp>
// A pair the before build refuses (exit 254, e.g. clock on etcd) is reported as
// refused by both, or, if only one build refuses it, as a difference.
//
// What is compared of a run, and why. It was learnt by running the SAME build
// (d428300) twice with the same seed: all 42 pairs with seeds 1 and 2 at
// --time-limit 5, 14 pairs (partitions, pause-server, kill and clock on the
// multi-server etcd, zookeeper and redlock, and some single-server ones) with
// seed 3 at --time-limit 20 (6 to 12 faults a run), and zookeeper and etcd kill
// again while the machine was busy. With --aim random a fault's choices come
// from the seeded generator and from what is still under an earlier fault: a
// nemesis picks among the targets not under one (a server not down, a worker or
// server not paused, a clock not moved), and a link fault waits while one is
// in force. Found:
//   - repeatable: each fault's START event, whole (`f` and its `value`: targets,
//     duration_ms, grudge, components, member_cuts, leader, mode, latency_ms,
//     jitter_ms, offset_ms, period_ms, restart_delay_ms, aim), whenever the
//     same targets were under a fault just before it in both runs; every start
//     was ended by its end event (same targets);
//   - repeatable mostly: the verdict class, which rests on races between the
//     clients and the faults: redlock/latency (seed 1) came out invalid in one
//     of its four runs of the same build on a busy machine, valid in the rest;
//   - not repeatable: `time` and `index` of every event; where the end events
//     fall among the starts; and so, on the multi-server backends, the TARGETS
//     of kill (and, rarely, of pause-server and clock): a killed server is
//     "down" until it answers again, which takes the restart delay plus a
//     wall-clock start (seconds for ZooKeeper's JVM), so whether it is back
//     before the next kill varies, and with it what the next kill picks from
//     (zookeeper/kill, seed 1, busy machine: "kill zk-3" in one run of the
//     build, "kill zk-2" in the other, after zk-2's restart fell the other side
//     of it);
//   - not repeatable: whether the last fault starts at all: the gaps are seeded
//     but the time limit is wall-clock time, and a fault due just before it
//     (150 ms, for the third pause with seed 1) is started in one run and not in
//     the other (dynamodb/kill, seed 2: 2 kills in one run, 3 in the other);
//   - nothing seeded to compare: a kill on a one-server backend (redis,
//     postgres, dynamodb, lockserver) has one target and a fixed restart delay,
//     so every kill's start event is alike; only their number and the verdict
//     are compared there (the output says so);
//   - repeatable by luck, not by construction: the leader an isolate-leader
//     partition cuts off (etcd, zookeeper) is whoever won the election; the
//     elections went the same way in every run.
// So compared are:
//   - the verdict class (exit 0 valid / 1 invalid / 2 unknown);
//   - over the faults both runs started (the first min(n, m)), each start event
//     as {f, type, value, ended_by} (ended_by: the end event stop-pause,
//     stop-partition, stop-latency, reset-clock or restart that later named
//     the same targets, or null), for each fault where the set of targets under
//     a fault just before it (from the history's own start and end events) is
//     the same in both runs; the others are skipped, and counted in the output;
//   - the number of faults started, to within one;
//   - the number of end events that end no start (0 in every run).
// A pair that differs is run once more with each build: it is the SAME if any
// before run matches any after run (the first difference was the timing's),
// DIFFERENT if each build repeated itself and they disagree, and UNREPEATABLE
// (not proven, exit 1) if a build disagreed with itself; what varied between
// two runs of one build is listed at the end. (A partition or latency fault in
// force when the next turn comes makes the turn pass without drawing: a fault
// ending within milliseconds of a turn can shift every later draw of one run.
// That was never seen, and would show as a difference the second runs settle.)
//
// With --keep DIR every copy, results.json, history and log of both builds is
// kept under DIR (made if missing, and must be empty); otherwise the temp
// directory is removed at the end. Every fencecheck run is started in its own
// process group and with a marker in its environment; a run that overstays is
// stopped with SIGTERM (a run closes cleanly on it) and then SIGKILL to its
// group, and any process left carrying the marker is killed, so nothing is left
// behind.
import { spawn } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import { randomBytes } from "node:crypto";

// ---------------------------------------------------------------------------
// What is not compared in results.json, and why.
//
// Found by checking every stored fixture twice with the same build (d428300):
// the only field that differed was stats.model.elapsed_ms, the wall-clock time
// the model check took (performance.now(), in checker/linearizable/check.ts at d428300), e.g.
// 4 vs 3, 2 vs 6. It measures the machine, not the history, so it is removed
// before the comparison. Nothing else in results.json depends on when or how
// fast the check ran (no timestamps; `duration_s` and the latencies come from
// the history's own times). The model check's budget (budget_ms, 10 s) could in
// principle turn a result "unknown" on a slow machine; it is compared, and the
// second check by the same build would show it as UNREPEATABLE.
const TIME_DEPENDENT_FIELDS = [["stats", "model", "elapsed_ms"]];

// A fault's end event, by its start event's f (docs/history-format.md, "Nemesis events").
const END_OF = { "start-pause": "stop-pause", "start-partition": "stop-partition", "start-latency": "stop-latency", "bump-clock": "reset-clock", kill: "restart" };
const END_EVENTS = new Set(Object.values(END_OF));

const USAGE = `usage: node scripts/same-meaning.mjs --before DIR --after DIR [--part fixtures|runs|all] [--seed N] [--time-limit S] [--keep DIR]`;

// ---------------------------------------------------------------------------
// Arguments.
function badArgs(message) {
  process.stderr.write(`same-meaning: ${message}\n${USAGE}\n`);
  process.exit(254);
}

function parseArgs(argv) {
  const opts = { part: "all", seed: "1", timeLimit: "5", keep: null, before: null, after: null };
  const names = { "--before": "before", "--after": "after", "--part": "part", "--seed": "seed", "--time-limit": "timeLimit", "--keep": "keep" };
  const seen = new Set();
  for (let i = 0; i < argv.length; i++) {
    let arg = argv[i];
    if (arg === "--help" || arg === "-h") {
      process.stdout.write(`${USAGE}\n`);
      process.exit(0);
    }
    let value;
    const eq = arg.indexOf("=");
    if (arg.startsWith("--") && eq > 0) [arg, value] = [arg.slice(0, eq), arg.slice(eq + 1)];
    if (!(arg in names)) badArgs(`unknown argument ${JSON.stringify(argv[i])}`);
    if (seen.has(arg)) badArgs(`${arg} given twice`);
    seen.add(arg);
    if (value === undefined) {
      value = argv[++i];
      if (value === undefined || value.startsWith("--")) badArgs(`${arg} needs a value`);
    }
    opts[names[arg]] = value;
  }
  for (const side of ["before", "after"]) {
    if (!opts[side]) badArgs(`--${side} DIR is required`);
    const dir = resolve(opts[side]);
    if (!existsSync(join(dir, "dist/cli/fencecheck.js"))) badArgs(`--${side} ${opts[side]}: no dist/cli/fencecheck.js there (a checkout that has been npm ci'd)`);
    opts[side] = dir;
  }
  if (!["fixtures", "runs", "all"].includes(opts.part)) badArgs(`--part must be fixtures, runs or all, not ${JSON.stringify(opts.part)}`);
  if (!/^\d+$/.test(opts.seed)) badArgs(`--seed must be a whole number >= 0, not ${JSON.stringify(opts.seed)}`);
  if (!/^\d+(\.\d+)?$/.test(opts.timeLimit) || !(Number(opts.timeLimit) > 0)) badArgs(`--time-limit must be a number of seconds > 0, not ${JSON.stringify(opts.timeLimit)}`);
  if (opts.keep !== null) {
    opts.keep = resolve(opts.keep);
    if (existsSync(opts.keep) && (!statSync(opts.keep).isDirectory() || readdirSync(opts.keep).length > 0)) badArgs(`--keep ${opts.keep}: must be an empty directory or not exist`);
  }
  return opts;
}

const opts = parseArgs(process.argv.slice(2));
const BUILDS = { before: opts.before, after: opts.after };
const root = opts.keep ?? mkdtempSync(join(tmpdir(), "same-meaning-"));
mkdirSync(root, { recursive: true });
const log = (line) => process.stdout.write(line + "\n");
process.stdout.on("error", () => {}); // a closed pipe (| head) must not stop the cleanup

// ---------------------------------------------------------------------------
// Running a build's command line, leaving nothing behind.
const MARK_ENV = "SAME_MEANING_MARK";
let current = null; // the child running now: { child, mark }
let interrupted = false;

/** Pids of the live processes whose environment carries `mark` (they inherit it from the run we started). */
function markedProcesses(mark) {
  const found = [];
  for (const d of readdirSync("/proc")) {
    if (!/^\d+$/.test(d) || Number(d) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${d}/environ`, "latin1").split("\0").includes(`${MARK_ENV}=${mark}`)) found.push(Number(d));
    } catch {}
  }
  return found;
}

function killGroup(pid, signal) {
  try {
    process.kill(-pid, signal);
  } catch {}
}

/**
 * Run `node <build>/dist/cli/fencecheck.js ...args` in its own process group,
 * cwd `cwd`, stdout and stderr kept (and written to `logPrefix`.stdout/.stderr).
 * Returns { code, stdout, stderr, seconds, leftovers }.
 */
function fencecheck(build, args, { cwd, timeoutS, logPrefix }) {
  if (interrupted) return Promise.resolve({ code: "interrupted", stdout: "", stderr: "", seconds: 0, timedOut: false, leftovers: [] });
  const mark = randomBytes(8).toString("hex");
  const started = Date.now();
  return new Promise((done) => {
    const child = spawn(process.execPath, [join(build, "dist/cli/fencecheck.js"), ...args], {
      cwd,
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, [MARK_ENV]: mark, NO_COLOR: "1" },
    });
    // A run that will not stop on SIGTERM gets SIGKILL (its group) 30 s later; cleared once it is gone, when its group id is no longer ours.
    const stop = () => {
      killGroup(child.pid, "SIGTERM");
      self.hardKill ??= setTimeout(() => killGroup(child.pid, "SIGKILL"), 30_000);
    };
    const self = { child, mark, stop, hardKill: undefined };
    current = self;
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      stop();
    }, timeoutS * 1000);
    child.on("close", async (code, signal) => {
      clearTimeout(timer);
      clearTimeout(self.hardKill);
      current = null;
      // The run's own processes should be gone with it; any that carry our mark are not, and are killed.
      let leftovers = markedProcesses(mark);
      if (leftovers.length) {
        await new Promise((r) => setTimeout(r, 2000));
        leftovers = markedProcesses(mark);
        for (const p of leftovers) {
          try {
            process.kill(p, "SIGCONT");
            process.kill(p, "SIGKILL");
          } catch {}
        }
      }
      if (logPrefix) {
        writeFileSync(`${logPrefix}.stdout`, stdout);
        writeFileSync(`${logPrefix}.stderr`, stderr);
      }
      done({ code: code ?? `signal ${signal}`, stdout, stderr, seconds: (Date.now() - started) / 1000, timedOut, leftovers });
    });
  });
}

/**
 * A signal stops the run under way (SIGTERM to its group: a run closes cleanly
 * on it; SIGKILL 30 s later if it has not), starts no other, and lets the main
 * flow end: it prints what it has, removes the temp directory and exits 130
 * (SIGINT) or 143.
 */
function onSignal(signal) {
  if (interrupted) return;
  interrupted = signal;
  process.stderr.write(`same-meaning: ${signal}: stopping the run under way, starting no other\n`);
  current?.stop();
}
process.on("SIGINT", onSignal);
process.on("SIGTERM", onSignal);
process.on("SIGHUP", onSignal);

// ---------------------------------------------------------------------------
// JSON comparison.

/** `value` with its keys sorted at every level, for a canonical stringify. */
function sortedKeys(value) {
  if (Array.isArray(value)) return value.map(sortedKeys);
  if (value && typeof value === "object") return Object.fromEntries(Object.keys(value).sort().map((k) => [k, sortedKeys(value[k])]));
  return value;
}

function withoutFields(value, fields) {
  const copy = structuredClone(value);
  for (const path of fields) {
    let at = copy;
    for (const k of path.slice(0, -1)) at = at && typeof at === "object" ? at[k] : undefined;
    if (at && typeof at === "object") delete at[path.at(-1)];
  }
  return copy;
}

const pathPart = (k, inArray) => (inArray ? `[${k}]` : /^[A-Za-z_$][\w$]*$/.test(k) ? `.${k}` : `[${JSON.stringify(k)}]`);

/** The first path (in sorted-key order) where `a` and `b` differ, with the two values there, or null. */
function firstDifference(a, b, path = "$") {
  if (JSON.stringify(a) === JSON.stringify(b)) return null;
  const bothObjects = a && b && typeof a === "object" && typeof b === "object" && Array.isArray(a) === Array.isArray(b);
  if (!bothObjects) return { path, a, b };
  const isArray = Array.isArray(a);
  const keys = isArray ? [...Array(Math.max(a.length, b.length)).keys()].map(String) : [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
  for (const k of keys) {
    if (!(k in a) || !(k in b)) return { path: path + pathPart(k, isArray) + (k in a ? " (only before)" : " (only after)"), a: a[k], b: b[k] };
    const d = firstDifference(a[k], b[k], path + pathPart(k, isArray));
    if (d) return d;
  }
  return { path, a, b };
}

/** A difference as text: its path, and the two values if they are short. */
function showDifference(d) {
  const [x, y] = [JSON.stringify(d.a) ?? "(none)", JSON.stringify(d.b) ?? "(none)"];
  return x.length + y.length <= 160 ? `${d.path}: ${x} vs ${y}` : d.path;
}

/** Every path (leaves) where `a` and `b` differ. */
function allDifferences(a, b, path = "$", out = []) {
  if (JSON.stringify(a) === JSON.stringify(b)) return out;
  const bothObjects = a && b && typeof a === "object" && typeof b === "object" && Array.isArray(a) === Array.isArray(b);
  if (!bothObjects) return out.push(path), out;
  const isArray = Array.isArray(a);
  const keys = isArray ? [...Array(Math.max(a.length, b.length)).keys()].map(String) : [...new Set([...Object.keys(a), ...Object.keys(b)])];
  for (const k of keys) allDifferences(a[k], b[k], path + pathPart(k, isArray), out);
  return out;
}

const firstLine = (text) => (text.split("\n").find((l) => l.trim() !== "") ?? "").trim();

// ---------------------------------------------------------------------------
// Part 1: fixtures.

/** Directories holding a history.ndjson under `dir`, symbolic links not followed. */
function runDirs(dir, out = []) {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return out;
  }
  if (entries.some((e) => e.name === "history.ndjson" && (e.isFile() || e.isSymbolicLink()))) out.push(dir);
  for (const e of entries) if (e.isDirectory() && e.name !== "node_modules" && e.name !== ".git") runDirs(join(dir, e.name), out);
  return out;
}

/** Directories named fixtures under `dir`, symbolic links not followed. */
function fixtureRoots(dir, out = []) {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return out;
  }
  for (const e of entries) {
    if (!e.isDirectory() || e.name === "node_modules") continue;
    if (e.name === "fixtures") out.push(join(dir, e.name));
    else fixtureRoots(join(dir, e.name), out);
  }
  return out;
}

function findFixtures(checkout) {
  const dirs = new Set(runDirs(join(checkout, "histories")));
  for (const f of fixtureRoots(join(checkout, "test"))) for (const d of runDirs(f)) dirs.add(d);
  return [...dirs].map((d) => relative(checkout, d)).sort();
}

/** Check the copy of fixture `rel` with `build`; `slot` names the copy (before, before-again, after). */
async function checkFixture(build, slot, rel) {
  const base = join(root, "fixtures", slot);
  const copy = join(base, "runs", rel);
  const out = join(base, "results", rel);
  mkdirSync(copy, { recursive: true });
  cpSync(join(opts.after, rel), copy, { recursive: true, dereference: true });
  mkdirSync(join(base, "cwd"), { recursive: true });
  mkdirSync(join(base, "logs", rel), { recursive: true });
  const r = await fencecheck(build, ["check", copy, "--out", out], { cwd: join(base, "cwd"), timeoutS: 600, logPrefix: join(base, "logs", rel, "check") });
  let results = null;
  let resultsError = null;
  const file = join(out, "results.json");
  if (existsSync(file)) {
    try {
      results = JSON.parse(readFileSync(file, "utf8"));
    } catch (err) {
      resultsError = `results.json is not JSON: ${err.message}`;
    }
  }
  const stderrLine = firstLine(r.stderr).split(copy).join("<run>").split(out).join("<out>").split(base).join("<tmp>").split(build).join("<build>");
  return { code: r.code, results, resultsError, stderrLine, seconds: r.seconds, leftovers: r.leftovers };
}

async function fixturesPart() {
  const started = Date.now();
  const fixtures = findFixtures(opts.after);
  log(`== fixtures: ${fixtures.length} run directories with a history.ndjson under ${opts.after}/histories and test/**/fixtures`);
  log(`   excluded from results.json (wall-clock, not the history's): ${TIME_DEPENDENT_FIELDS.map((p) => p.join(".")).join(", ")}`);
  if (fixtures.length === 0) {
    log(`fixtures: none found in ${opts.after}: nothing to compare`);
    return { ok: false, seconds: 0 };
  }
  // A fixture of the before checkout whose history.ndjson is in no fixture of the after checkout was dropped or changed.
  const contentOf = (checkout, rel) => readFileSync(join(checkout, rel, "history.ndjson"), "latin1");
  const afterContents = new Set(fixtures.map((rel) => contentOf(opts.after, rel)));
  const gone = findFixtures(opts.before).filter((rel) => !afterContents.has(contentOf(opts.before, rel)));
  if (gone.length) log(`   note: ${gone.length} fixture(s) of the before checkout have no fixture with the same history.ndjson in the after checkout (not checked): ${gone.join(", ")}`);
  const counts = { same: 0, different: 0, unrepeatable: 0 };
  const refused = [];
  const width = Math.max(0, ...fixtures.map((f) => f.length));
  for (const rel of fixtures) {
    if (interrupted) break;
    const a = await checkFixture(BUILDS.before, "before", rel);
    const a2 = await checkFixture(BUILDS.before, "before-again", rel);
    const b = await checkFixture(BUILDS.after, "after", rel);
    if (interrupted) break;
    for (const [who, r] of [["before", a], ["before again", a2], ["after", b]]) {
      if (r.leftovers.length) log(`   ${rel}: the ${who} check left processes ${r.leftovers.join(" ")} (killed)`);
    }
    const norm = (r) => (r.results === null ? null : sortedKeys(withoutFields(r.results, TIME_DEPENDENT_FIELDS)));
    const [na, na2, nb] = [norm(a), norm(a2), norm(b)];
    const codeNote = `exit ${a.code}`;
    if (![0, 1, 2].includes(a.code)) refused.push(`${rel}: before exit ${a.code}: ${a.stderrLine}`);
    if (![0, 1, 2].includes(b.code) && b.code !== a.code) refused.push(`${rel}: after exit ${b.code}: ${b.stderrLine}`);
    // Repeatability first: what differs between two checks by the same build cannot be compared across builds.
    const noise = [];
    if (a.code !== a2.code) noise.push(`exit ${a.code} vs ${a2.code}`);
    if (JSON.stringify(na) !== JSON.stringify(na2)) noise.push(...allDifferences(na, na2));
    let verdict;
    if (a.code !== b.code) verdict = `DIFFERENT: exit code ${a.code} before, ${b.code} after`;
    else if ((na === null) !== (nb === null)) verdict = `DIFFERENT: results.json written by ${na === null ? "after" : "before"} only`;
    else if (na === null && (a.resultsError ?? a.stderrLine) !== (b.resultsError ?? b.stderrLine))
      verdict = `DIFFERENT: no results.json; stderr "${a.stderrLine}" before, "${b.stderrLine}" after`;
    else if (na !== null && JSON.stringify(na) !== JSON.stringify(nb)) verdict = `DIFFERENT: ${showDifference(firstDifference(na, nb))}`;
    else verdict = "same";
    if (verdict === "same" && noise.length) {
      verdict = `UNREPEATABLE (differs between two checks by the before build: ${noise.slice(0, 3).join(", ")})`;
      counts.unrepeatable++;
    } else if (verdict === "same") counts.same++;
    else counts.different++;
    const extra = na === null ? ` (no results.json: ${a.resultsError ?? a.stderrLine})` : "";
    log(`${rel.padEnd(width)}  ${codeNote}  ${verdict}${extra}`);
  }
  const seconds = (Date.now() - started) / 1000;
  log(`fixtures: ${fixtures.length} checked, ${counts.same} same, ${counts.different} different${counts.unrepeatable ? `, ${counts.unrepeatable} unrepeatable` : ""} (${seconds.toFixed(0)} s)`);
  if (refused.length) {
    log(`   refused or failed (exit 254/255):`);
    for (const r of refused) log(`   ${r}`);
  }
  return { ok: counts.different === 0 && counts.unrepeatable === 0 && fixtures.length > 0, seconds };
}

// ---------------------------------------------------------------------------
// Part 2: live runs.

/** The choices `fencecheck test --help` lists for `option` ("--backend a|b|c ..."). */
function choices(help, option) {
  const line = help.split("\n").find((l) => l.trimStart().startsWith(option + " "));
  const m = line?.trimStart().slice(option.length).trimStart().match(/^([\w.:-]+(?:\|[\w.:-]+)*)/);
  return m ? m[1].split("|") : null;
}

/** The nemesis events of a run's history: the header skipped, one object per event. */
function nemesisEvents(historyFile) {
  const events = [];
  for (const line of readFileSync(historyFile, "utf8").split("\n")) {
    if (!line.trim()) continue;
    let e;
    try {
      e = JSON.parse(line);
    } catch {
      continue;
    }
    if (e.kind === "header" || e.process !== "nemesis") continue;
    events.push(e);
  }
  return events;
}

/**
 * What the seeded schedule decides of a run's faults: each start event as
 * {f, type, value, ended_by}, `ended_by` the end event with the same targets
 * that came after it (null if none did). Each start's `inForce` (not compared
 * itself) lists the targets still under an earlier fault just before it: what
 * the nemesis could not choose then (a server still down, a worker still
 * paused, a partition still in force).
 */
function scheduled(events) {
  const used = new Set();
  const starts = [];
  const inForce = [];
  events.forEach((e, i) => {
    const targets = (e.value?.targets ?? []).map(String);
    if (END_EVENTS.has(e.f)) {
      for (const t of targets) if (inForce.includes(t)) inForce.splice(inForce.indexOf(t), 1);
      return;
    }
    const key = JSON.stringify(e.value?.targets ?? null);
    const j = events.findIndex((x, k) => k > i && !used.has(k) && x.f === END_OF[e.f] && JSON.stringify(x.value?.targets ?? null) === key);
    if (j >= 0) used.add(j);
    const start = sortedKeys({ f: e.f, type: e.type, value: e.value ?? null, ended_by: j >= 0 ? events[j].f : null });
    Object.defineProperty(start, "inForce", { value: [...inForce].sort(), enumerable: false });
    starts.push(start);
    if (END_OF[e.f]) inForce.push(...targets);
  });
  starts.strayEnds = events.filter((e, k) => END_EVENTS.has(e.f) && !used.has(k)).length;
  return starts;
}

const describe = (s) => `${s.f} ${JSON.stringify(s.value.targets ?? [])}`;

function findHistory(store) {
  const dirs = runDirs(store);
  return dirs.length ? join(dirs[0], "history.ndjson") : null;
}

/** One `fencecheck test` of `side`'s build; `slot` names its directory (before, after, before-2, after-2). */
async function runOnce(side, slot, backend, nemesis) {
  const base = join(root, "runs", slot, `${backend}-${nemesis}`);
  mkdirSync(join(base, "cwd"), { recursive: true });
  const store = join(base, "store");
  const args = ["test", "--backend", backend, "--nemesis", nemesis, "--aim", "random", "--seed", opts.seed, "--time-limit", opts.timeLimit, "--store", store];
  const r = await fencecheck(BUILDS[side], args, { cwd: join(base, "cwd"), timeoutS: Number(opts.timeLimit) + 600, logPrefix: join(base, "run") });
  const history = existsSync(store) ? findHistory(store) : null;
  const events = history ? nemesisEvents(history) : null;
  return { ...r, slot, history, events, starts: events ? scheduled(events) : null, stderrLine: firstLine(r.stderr) };
}

const VERDICT = { 0: "valid", 1: "invalid", 2: "unknown" };
const verdictOf = (code) => VERDICT[code] ?? `exit ${code}`;
const usable = (r) => [0, 1, 2].includes(r.code) && r.starts !== null;

/**
 * How two runs differ in what is compared ({text} or null), and how many faults
 * were compared: the verdict class, and the start events of the faults both
 * started (the first min(n, m)), each one only where the same targets were
 * under a fault just before it in both runs (else what it could choose from
 * was decided by timing: skipped); a fault count that differs by more than one
 * (more than the one fault a time limit can cut off) is a difference too.
 */
function compareRuns(x, y) {
  const out = [];
  const n = Math.min(x.starts.length, y.starts.length);
  let compared = 0;
  for (let i = 0; i < n; i++) {
    if (JSON.stringify(x.starts[i].inForce) !== JSON.stringify(y.starts[i].inForce)) continue;
    compared++;
    const d = firstDifference(x.starts[i], y.starts[i], `fault[${i}]`);
    if (d && out.length === 0) out.push(`${showDifference(d)} (${describe(x.starts[i])} vs ${describe(y.starts[i])})`);
  }
  if (Math.abs(x.starts.length - y.starts.length) > 1) out.push(`${x.starts.length} vs ${y.starts.length} faults started`);
  if (x.starts.strayEnds !== y.starts.strayEnds) out.push(`${x.starts.strayEnds} vs ${y.starts.strayEnds} end events that end no fault`);
  if (x.code !== y.code) out.push(`verdict ${verdictOf(x.code)} vs ${verdictOf(y.code)}`);
  return { text: out.length ? out.join("; ") : null, compared, skipped: n - compared };
}
const runDifference = (x, y) => compareRuns(x, y).text;

/**
 * Where every fault of both runs has the same start event, the seed chose
 * nothing that the events show (a kill of the one server there is, with a
 * fixed restart delay): say so, rather than let "same" claim more than it does.
 */
function alike(x, y) {
  const all = [...x.starts, ...y.starts].map((s) => JSON.stringify(s));
  if (all.length === 0) return "no fault started in either run: nothing but the verdict compared";
  return all.length > 2 && all.every((s) => s === all[0]) ? "every fault alike: only their number compared" : null;
}

async function runsPart() {
  const started = Date.now();
  const helpOf = async (side) => (await fencecheck(BUILDS[side], ["test", "--help"], { cwd: root, timeoutS: 60 })).stdout;
  const [helpBefore, helpAfter] = [await helpOf("before"), await helpOf("after")];
  const backends = choices(helpBefore, "--backend");
  const nemeses = choices(helpBefore, "--nemesis")?.filter((n) => n !== "none");
  if (!backends || !nemeses) {
    log(`runs: could not read the --backend and --nemesis choices from the before build's \`fencecheck test --help\``);
    return { ok: false, seconds: 0 };
  }
  let ok = true;
  const [afterBackends, afterNemeses] = [choices(helpAfter, "--backend"), choices(helpAfter, "--nemesis")?.filter((n) => n !== "none")];
  log(`== runs: backends ${backends.join(",")}; nemeses ${nemeses.join(",")}; --aim random --seed ${opts.seed} --time-limit ${opts.timeLimit}; one run at a time`);
  log(`   compared: the verdict class; each fault's start event (f, targets, drawn parameters) and whether its end event came, in order, over the faults both runs`);
  log(`     started, where the same targets were under a fault just before it in both runs; the number of faults, to within one`);
  log(`   not compared (varies between two runs of one build): event times and indexes; where end events fall; whether the last fault fits in the time limit;`);
  log(`     what a fault picks from when a restart or resume fell the other side of it`);
  log(`   a pair that differs is run again with both builds: DIFFERENT only if each build repeats itself and they disagree`);
  // A choice the after build adds (a new backend) is no change to what the before
  // build's runs mean: it is named, and has nothing to be compared with. One it lacks is.
  const lost = [...backends.filter((b) => !afterBackends?.includes(b)), ...nemeses.filter((n) => !afterNemeses?.includes(n))];
  const added = [...(afterBackends ?? []).filter((b) => !backends.includes(b)), ...(afterNemeses ?? []).filter((n) => !nemeses.includes(n))];
  if (lost.length) {
    log(`DIFFERENT: the after build lacks ${lost.join(", ")} (its choices: backends ${afterBackends?.join(",")}; nemeses ${afterNemeses?.join(",")})`);
    ok = false;
  }
  if (added.length) log(`   new in the after build, with nothing to compare them with: ${added.join(", ")}`);
  const counts = { pairs: 0, same: 0, different: 0, refused: 0, failed: 0, unrepeatable: 0, runs: 0 };
  const noise = []; // what differed between two runs of one build
  const alikePairs = []; // pairs whose faults carry nothing the seed drew
  const skippedPairs = []; // pairs with faults not compared, as "backend/nemesis count"
  const width = Math.max(...backends.map((b) => b.length)) + Math.max(...nemeses.map((n) => n.length)) + 1;
  pairs: for (const backend of backends) {
    for (const nemesis of nemeses) {
      const name = `${backend}/${nemesis}`.padEnd(width);
      const run = async (side, slot) => {
        const r = await runOnce(side, slot, backend, nemesis);
        counts.runs++;
        if (r.timedOut) log(`   ${name}: the ${slot} run overstayed and was stopped`);
        if (r.leftovers.length) log(`   ${name}: the ${slot} run left processes ${r.leftovers.join(" ")} (killed)`);
        return r;
      };
      const a = await run("before", "before");
      const b = await run("after", "after");
      if (interrupted) break pairs;
      counts.pairs++;
      if (a.code === 254 || b.code === 254) {
        if (a.code === 254 && b.code === 254) {
          counts.refused++;
          log(`${name}  refused by both (exit 254): ${a.stderrLine}`);
          if (a.stderrLine !== b.stderrLine) log(`${"".padEnd(width)}  (the after build's message: ${b.stderrLine})`);
        } else {
          counts.different++;
          log(`${name}  DIFFERENT: refused (exit 254) by the ${a.code === 254 ? "before" : "after"} build only: ${(a.code === 254 ? a : b).stderrLine}`);
        }
        continue;
      }
      const runs = { before: [a], after: [b] };
      let diff = usable(a) && usable(b) ? runDifference(a, b) : "a run failed";
      const secs = () => [...runs.before, ...runs.after].map((r) => r.seconds.toFixed(0)).join("+") + " s";
      const summary = (x, y) => {
        const c = compareRuns(x, y);
        if (c.skipped) skippedPairs.push(`${name.trim()} ${c.skipped}`);
        const skipped = c.skipped ? `, ${c.skipped} skipped (other targets under a fault before it: timing)` : "";
        return `${x.code === y.code ? verdictOf(x.code) : `${verdictOf(x.code)} vs ${verdictOf(y.code)}`}; ${x.starts.length}/${y.starts.length} faults, ${c.compared} compared${skipped}`;
      };
      if (!diff) {
        counts.same++;
        const note = alike(a, b) ? `  (${alike(a, b)})` : "";
        if (note) alikePairs.push(name.trim());
        log(`${name}  same  [${summary(a, b)}; ${secs()}]${note}`);
        continue;
      }
      // Once more with each build: is the difference the builds', or the timing's?
      runs.before.push(await run("before", "before-2"));
      runs.after.push(await run("after", "after-2"));
      if (interrupted) break pairs;
      const [a2, b2] = [runs.before[1], runs.after[1]];
      const all = [a, a2, b, b2];
      if (!all.every(usable)) {
        counts.failed++;
        const why = (r) => `${r.slot} exit ${r.code}${r.events ? "" : ", no history.ndjson"}${[0, 1, 2].includes(r.code) ? "" : `: ${r.stderr.trim().split("\n").at(-1)}`}`;
        log(`${name}  FAILED (nothing to compare): ${all.filter((r) => !usable(r)).map(why).join("; ")}  [${secs()}]`);
        continue;
      }
      const selfBefore = runDifference(a, a2);
      const selfAfter = runDifference(b, b2);
      if (selfBefore) noise.push(`${name.trim()}: the before build's two runs: ${selfBefore}`);
      if (selfAfter) noise.push(`${name.trim()}: the after build's two runs: ${selfAfter}`);
      const match = [[a, b], [a, b2], [a2, b], [a2, b2]].find(([x, y]) => !runDifference(x, y));
      if (match) {
        counts.same++;
        log(`${name}  same on a second run  [${summary(match[0], match[1])}; first runs differed: ${diff}; ${secs()}]`);
      } else if (!selfBefore && !selfAfter) {
        counts.different++;
        log(`${name}  DIFFERENT: ${diff}  [each build repeated itself; ${secs()}]`);
      } else {
        counts.unrepeatable++;
        log(`${name}  UNREPEATABLE: before vs after ${diff}; ${selfBefore ? `before vs before ${selfBefore}` : ""}${selfBefore && selfAfter ? "; " : ""}${selfAfter ? `after vs after ${selfAfter}` : ""}  [${secs()}]`);
      }
    }
  }
  const seconds = (Date.now() - started) / 1000;
  log(
    `runs: ${counts.pairs} pairs, ${counts.same} same, ${counts.different} different, ${counts.refused} refused by both, ` +
      `${counts.unrepeatable} unrepeatable, ${counts.failed} failed; ${counts.runs} runs (${seconds.toFixed(0)} s)`,
  );
  if (skippedPairs.length)
    log(`   faults skipped because the targets under a fault just before them differed between the runs (a restart or a resume fell the other side of the next fault): ${skippedPairs.join(", ")}`);
  if (alikePairs.length)
    log(`   every fault alike (one target, fixed parameters: the seed drew nothing but the gaps, which are times), so only their number and the verdict were compared: ${alikePairs.join(", ")}`);
  if (noise.length) {
    log(`   not repeatable between two runs of one build (timing, not the build):`);
    for (const n of noise) log(`   ${n}`);
  }
  return { ok: ok && counts.different === 0 && counts.failed === 0 && counts.unrepeatable === 0, seconds };
}

// ---------------------------------------------------------------------------
let ok = true;
try {
  log(`same-meaning: before ${opts.before}, after ${opts.after}; work directory ${root}${opts.keep ? " (kept)" : " (removed at the end)"}`);
  if (opts.part !== "runs") ok = (await fixturesPart()).ok && ok;
  if (opts.part !== "fixtures" && !interrupted) ok = (await runsPart()).ok && ok;
  if (interrupted) log(`INTERRUPTED (${interrupted}): the comparison is incomplete`);
  else log(ok ? "SAME: everything compared is the same" : "NOT SAME: see the lines above");
} finally {
  if (!opts.keep) rmSync(root, { recursive: true, force: true });
}
process.exit(interrupted ? (interrupted === "SIGINT" ? 130 : 143) : ok ? 0 : 1);
