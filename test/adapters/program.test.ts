// Lock adapters as programs (docs/adapter-protocol.md): the example Redis adapter
// through the Node bridge runs like the in-process one (valid fenced, caught
// unfenced under pauses); a program that writes a line that is no message, that
// crashes or that hangs is killed, its operation recorded as info naming what it
// did, a new program serves its client, and the history checks: UNKNOWN, with
// each protocol error in protocol-errors.ndjson (a stray line while nothing was
// outstanding too), where a hang is an ordinary info; a SIGKILLed run leaves no
// program behind; a manifest that is wrong is refused before anything starts.
import { describe, it, expect } from "vitest";
import { existsSync, readdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tempRunDir, runCli, latestRun, readNdjson, waitFor, REPO } from "../helpers.ts";

const BRIDGE = "./adapters/node/redis-example.adapter.json";
const fixture = (name: string) => `./test/adapters/fixtures/${name}.adapter.json`;
const quick = ["--concurrency", "4", "--workers", "2", "--seed", "5"];

function stored(store: string) {
  const dir = realpathSync(latestRun(store));
  const lines = readNdjson(join(dir, "history.ndjson"));
  const logs = readdirSync(join(dir, "logs")).filter((f) => f.startsWith("worker-")).map((f) => readFileSync(join(dir, "logs", f), "utf8")).join("\n");
  const errorsFile = join(dir, "protocol-errors.ndjson");
  const protocolErrors = existsSync(errorsFile) ? readNdjson(errorsFile) : [];
  return { dir, header: lines[0], events: lines.slice(1), logs, protocolErrors, results: JSON.parse(readFileSync(join(dir, "results.json"), "utf8")) };
}

/** A process's state letter (R, S, T, ...) and process group, or null when it is gone. */
function stateOf(pid: number): { state: string; pgid: number } | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const [state, , pgid] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return { state, pgid: Number(pgid) };
  } catch {
    return null;
  }
}

/** The workers of the store's latest run, by pid, once run.json names them. */
function workerPids(store: string): number[] {
  try {
    return Object.values(JSON.parse(readFileSync(join(latestRun(store), "run.json"), "utf8")).workers ?? {}).map((w) => (w as { pid: number }).pid);
  } catch {
    return [];
  }
}

/** Process ids of every process now in one of these process groups. */
function inGroups(pgids: number[]): number[] {
  return readdirSync("/proc").filter((d) => /^\d+$/.test(d)).map(Number).filter((pid) => pgids.includes(stateOf(pid)?.pgid ?? -1));
}

describe("adapter programs", () => {
  it("the example adapter through the bridge: fenced under pauses valid, format 2 with the client in the header; a pause freezes the worker's programs with it", async () => {
    const store = tempRunDir("fc-program-");
    const cli = runCli("test", [...quick, "--client", BRIDGE, "--nemesis", "pause", "--nemesis-interval", "1", "--time-limit", "6", "--store", store]);
    // While it runs: a worker stopped (T) with its adapter programs stopped too, seen in /proc.
    let exited = false;
    void cli.exit.then(() => (exited = true));
    let frozenTogether = false;
    while (!exited && !frozenTogether) {
      for (const w of workerPids(store)) {
        if (stateOf(w)?.state !== "T") continue;
        const programs = inGroups([w]).filter((p) => p !== w);
        frozenTogether ||= programs.length === 2 && programs.every((p) => stateOf(p)?.state === "T");
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(frozenTogether).toBe(true);
    expect(await cli.exit, cli.stdout() + cli.stderr()).toBe(0);
    const run = stored(store);
    expect(run.header).toMatchObject({ format: 2, lock: "mutex", client: join(REPO, BRIDGE) });
    expect(run.results.valid).toBe(true);
    expect(run.results.stats.lost_holds).toBeDefined();
    // The summary says it too, in a line of its own (format 2 runs only).
    expect(cli.stdout() + cli.stderr()).toMatch(/^ {2}lost holds: /m);
    // Owners carry the program's prefix: client, then program number.
    expect(run.events.find((e) => e.f === "acquire" && e.type === "ok")?.value).toMatchObject({ owner: expect.stringMatching(/^c\da1-h\d+$/) });
    expect(run.logs).toMatch(/library: fencecheck node bridge/);
  });

  it("unfenced under pauses: stale-write-accepted", async () => {
    const store = tempRunDir("fc-program-");
    // Besides the nemesis' SIGSTOPs, which may or may not land between a holder's
    // grant and its write in 8 s on a busy machine (a whole-suite run once had 24
    // lease overlaps and no stale write), every holder waits 1.5 s, past its 1 s
    // lease, before writing: a stale write the resource must accept without fencing.
    const cli = runCli("test", [...quick, "--client", BRIDGE, "--nemesis", "pause", "--nemesis-interval", "1", "--pause", "1500", "--fence", "off", "--time-limit", "8", "--store", store]);
    expect(await cli.exit, cli.stdout() + cli.stderr()).toBe(1);
    expect(stored(store).results.anomaly_types).toContain("stale-write-accepted");
  });

  for (const [mode, error, said] of [
    ["bad-line", "adapter-bad-line", /wrote a line that is not a message of the protocol \(not JSON\): this is not JSON; killed it; its standard error ended with:\n\s+misbehaving: acquire #3, mode bad-line/],
    ["crash", "adapter-exited", /exited \(code 3\); killed it; its standard error ended with:\n\s+misbehaving: acquire #3, mode crash/],
    ["hang", "adapter-timeout", /did not answer acquire \(id \d+\) within \d+ ms; killed it/],
  ] as const) {
    const broke = mode !== "hang";
    it(`a program that ${mode === "bad-line" ? "writes a line that is no message" : mode === "crash" ? "crashes" : "hangs"}: info ${error}, a message naming it, a new program, a checkable history, ${broke ? "UNKNOWN with each error recorded" : "VALID (a timeout is an ordinary info)"}`, async () => {
      const store = tempRunDir("fc-program-");
      // Each program breaks on its third acquire and its client's next program is granted
      // about 2-3 s in (a hang first waits out the command timeout, and needs the 7 s).
      const cli = runCli("test", [...quick, "--client", fixture(mode), "--nemesis", "none", "--ttl", "400", "--command-timeout", "800", "--time-limit", mode === "hang" ? "7" : "5", "--store", store]);
      expect(await cli.exit, cli.stdout() + cli.stderr()).toBe(broke ? 2 : 0);
      const run = stored(store);
      const infos = run.events.filter((e) => e.type === "info" && e.f === "acquire");
      expect(infos.length).toBeGreaterThan(0);
      expect(infos.every((e) => e.error === error)).toBe(true);
      // Each broke the protocol while its acquire was outstanding: one recorded error per info. A hang records none.
      expect(run.protocolErrors.map((e) => e.code)).toEqual(broke ? infos.map(() => error) : []);
      expect(run.results.valid).toBe(broke ? "unknown" : true);
      expect(run.results.stats.protocol_errors).toBe(run.protocolErrors.length);
      expect(run.logs).toMatch(new RegExp(`adapter ${join(REPO, fixture(mode)).replace(/[./]/g, "\\$&")} \\(client \\d, pid \\d+\\) `));
      expect(run.logs).toMatch(said);
      // The person running the test hears of it too, not only the worker's log.
      expect(cli.stderr()).toMatch(new RegExp(`fencecheck: worker-\\d: adapter .*\\(client \\d, pid \\d+\\) `));
      expect(cli.stderr()).toMatch(said);
      // The client went on: a later acquire under a new process, by a second program (owner prefix a2).
      const p = infos[0].process as number;
      expect(run.events.some((e) => e.process === p + 4 && e.f === "acquire" && e.type === "ok" && String((e.value as { owner: string }).owner).includes("a2-"))).toBe(true);
      const check = runCli("check", [run.dir]);
      expect(await check.exit, check.stderr()).toBe(broke ? 2 : 0);
    });
  }

  it("a stray line on standard output, once with an acquire outstanding and once with nothing outstanding: both recorded, the run UNKNOWN (exit 2), and so is its stored run checked again", async () => {
    const store = tempRunDir("fc-program-");
    // Client 0's first program strays on its second acquire (about 1 s in), its second after its first release.
    const cli = runCli("test", [...quick, "--client", fixture("stray"), "--nemesis", "none", "--ttl", "400", "--command-timeout", "800", "--time-limit", "4", "--store", store]);
    const said = cli.stdout() + cli.stderr();
    expect(await cli.exit, said).toBe(2);
    const run = stored(store);
    expect(run.protocolErrors).toEqual([
      expect.objectContaining({ client: 0, worker: "worker-1", code: "adapter-bad-line", message: expect.stringContaining("(not JSON): stray while outstanding; killed it") }),
      expect.objectContaining({ client: 0, worker: "worker-1", code: "adapter-bad-line", message: expect.stringContaining("(not JSON): stray while idle; killed it") }),
    ]);
    // The first ended its acquire (an info of its process); the second ended nothing: no line of the history names it.
    const [outstanding, idle] = run.protocolErrors as Array<{ process: number; time: number }>;
    expect(run.events.filter((e) => e.type === "info")).toEqual([expect.objectContaining({ process: outstanding.process, f: "acquire", error: "adapter-bad-line" })]);
    expect(run.events.some((e) => e.process === idle.process && e.error === "adapter-bad-line")).toBe(false);
    expect(run.results).toMatchObject({ valid: "unknown", anomaly_types: [], stats: { protocol_errors: 2 } });
    expect(cli.stdout()).toMatch(/^UNKNOWN/);
    expect(cli.stdout()).toMatch(/^ {2}protocol errors: 2 \(each a line of protocol-errors\.ndjson/m);
    // Why that makes it UNKNOWN, once, as the run's reason (on stderr, as every reason a check is incomplete).
    expect(cli.stderr()).toMatch(/cannot fully check the run: the adapter program broke the protocol 2 times \(adapter-bad-line ×2;/);
    // The stored run, checked again by either checker: the same verdict and count.
    const check = runCli("check", [run.dir, "--out", tempRunDir("fc-recheck-")]);
    expect(await check.exit, check.stderr()).toBe(2);
    expect(check.stdout()).toMatch(/^UNKNOWN[\s\S]*protocol errors: 2 /);
    const reference = runCli("check", ["--reference", run.dir, "--out", tempRunDir("fc-recheck-")]);
    expect(await reference.exit, reference.stderr()).toBe(2);
    expect(reference.stdout()).toMatch(/^UNKNOWN[\s\S]*cannot fully check the run: the adapter program broke the protocol 2 times/);
  });

  it("a SIGKILLed run leaves no adapter program, not even one that ignores its input closing: the reaper kills each worker's process group", async () => {
    const store = tempRunDir("fc-program-");
    const cli = runCli("test", [...quick, "--client", fixture("deaf"), "--nemesis", "pause", "--time-limit", "60", "--store", store]);
    const workers = () => workerPids(store);
    expect(await waitFor(() => workers().length === 2 && inGroups(workers()).length >= 10, 30_000)).toBe(true);
    const pgids = workers();
    // Each worker, its two programs and the bridge each of those runs.
    expect(inGroups(pgids).length).toBe(10);
    process.kill(cli.child.pid!, "SIGKILL");
    await cli.exit;
    expect(await waitFor(() => inGroups(pgids).length === 0, 10_000)).toBe(true);
  });

  it("a manifest that is wrong, or a program that does not answer init, is refused with 254 before anything starts", async () => {
    const dir = tempRunDir("fc-manifest-");
    const write = (name: string, o: unknown) => {
      writeFileSync(join(dir, name), typeof o === "string" ? o : JSON.stringify(o));
      return join(dir, name);
    };
    const store = tempRunDir("fc-program-");
    const base = { protocol: 1, describe: "x", command: ["node", "-e", "0"], backends: ["redis"], fences: true, renew: "explicit" };
    for (const [manifest, said] of [
      [write("broken.json", "{ not json"), /broken\.json: not valid JSON/],
      [write("fields.json", { ...base, protocol: 2, command: [], renew: "sometimes" }), /"protocol" must be 1 .*; "command" must be a non-empty list of strings .*; "renew" must be one of explicit, automatic, none/],
      [write("backend.json", { ...base, backends: ["etcd"] }), /works with --backend etcd \(its "backends"\), not --backend redis/],
      [write("silent.json", { ...base, command: ["node", "-e", "console.error('no module named redis'); process.exit(1)"] }), /the adapter did not start as the protocol asks .*exited \(code 1\).*no module named redis/s],
      [write("missing.json", { ...base, command: ["/nonexistent/adapter"] }), /the adapter did not start .*could not be started: spawn \/nonexistent\/adapter ENOENT/s],
    ] as const) {
      const cli = runCli("test", ["--client", manifest, "--time-limit", "3", "--store", store]);
      expect(await cli.exit, cli.stderr()).toBe(254);
      expect(cli.stderr()).toMatch(said);
    }
    expect(readdirSync(store).filter((f) => f !== "logs")).toEqual([]);
  });
});
