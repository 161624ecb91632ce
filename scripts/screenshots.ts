// The pictures in the docs (docs/images/*.png), made from runs of their own with
// headless Chromium, so that they show what the code of today draws:
//
//   report-invalid.png   an INVALID run's report.html (fencing off, SIGSTOP pauses):
//                        its verdict, the stale write's witness and its sentence, and
//                        the timeline with the witness's band highlighted
//   soak-summary.png     a soak's summary.html (the smoke preset, one run each):
//                        every configuration against what it expects
//   experiment-plot.png  an experiment's report.html (keys --quick): line plots
//                        with their axes and legends
//
//   npm run docs:images [-- --only report,soak,experiment] [--keep]
//   (that is: tsx scripts/screenshots.ts [--only ...] [--keep])
//
// Debian's chromium is installed first if missing (setup/: apt as root or through
// sudo -n, printed and timed as a run's own installs are). The runs go to a
// temporary store with fixed seeds; a seed whose run does not show what its
// picture is for (a pause that missed the holder: VALID) is followed by the next,
// and the seed used is printed. The store and each Chromium profile are removed at
// the end (--keep leaves the store and prints it), and no Chromium process outlives
// its screenshot. Exit 0 when every picture asked for was written, 1 otherwise.
//
// Chromium is driven through its DevTools pipe rather than --screenshot, which
// takes the window from its top: each picture here is a region of the page found
// in its DOM (down to the bottom of the timeline, of the soak's tables, around the
// plots), whatever the run's length. And --screenshot with the URL's fragment,
// which highlights the witness, drew a half-painted scrolled window (Chromium 156).
import { spawn, spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { CHROMIUM, ensure } from "../setup/index.ts";
import { chromiumBinary } from "../setup/requirements.ts";

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const CLI = join(REPO, "dist", "cli", "fencecheck.js");
const OUT = join(REPO, "docs", "images");
/** Past this a picture is said to be too big for the docs (the test's limit is 1 MB). */
const MAX_BYTES = 400 * 1024;
const CHROMIUM_TIMEOUT_MS = 90_000;
/** CSS pixels down the window: most clips fit in it, so the page is laid out as a tall screen shows it. */
const HEIGHT = 1600;

interface Shot {
  /** What --only names it by. */
  id: "report" | "soak" | "experiment";
  file: string;
  /** Makes the run; resolves with the page to show and where it came from. */
  make(store: string): Promise<{ url: string; from: string }>;
  /** CSS pixels across the window. */
  width: number;
  /** Device pixels per CSS pixel in the picture. */
  scale: number;
  /** The body of a function run in the page that returns the region to show ({ x, y, width, height }, document CSS pixels), or throws when the page is not what the picture is for. */
  clip: string;
}

const say = (line: string): void => void process.stdout.write(`${line}\n`);

// ---------------------------------------------------------------------------
// The runs

interface Ran {
  code: number | null;
  out: string;
}

/** Children alive: a run's pid, or minus a Chromium's process group. */
const live = new Set<number>();
let stopping = false;

/** `fencecheck <args>`, its output passed through indented and kept for reading. */
function fencecheck(args: string[]): Promise<Ran> {
  if (stopping) return Promise.reject(new Error("interrupted"));
  say(`$ fencecheck ${args.join(" ")}`);
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [CLI, ...args], { cwd: REPO, stdio: ["ignore", "pipe", "pipe"] });
    if (child.pid) live.add(child.pid);
    let out = "";
    const pass = (chunk: Buffer): void => {
      const text = chunk.toString("utf8");
      out += text;
      process.stdout.write(text.replace(/^(?=.)/gm, "    "));
    };
    child.stdout.on("data", pass);
    child.stderr.on("data", pass);
    child.on("error", fail);
    child.on("close", (code) => {
      if (child.pid) live.delete(child.pid);
      done({ code, out });
    });
  });
}

const line = (out: string, label: string): string | undefined => new RegExp(`^${label}: (.+)$`, "m").exec(out)?.[1]?.trim();

/** Seeds tried in turn; the first is what the pictures in the repository were made with. */
const INVALID_SEEDS = [1, 2, 3, 4, 5, 6];
const SOAK_SEEDS = [1, 2, 3];

async function invalidRun(store: string): Promise<{ url: string; from: string }> {
  for (const seed of INVALID_SEEDS) {
    const args = ["test", "--nemesis", "pause", "--fence", "off", "--time-limit", "10", "--seed", String(seed), "--store", store];
    const r = await fencecheck(args);
    const dir = line(r.out, "Run directory");
    if (!dir) throw new Error(`fencecheck test exited ${r.code} without a run directory`);
    const results = JSON.parse(readFileSync(join(dir, "results.json"), "utf8")) as { valid: unknown; anomaly_types?: string[]; anomalies?: Record<string, unknown[]> };
    const types = results.anomaly_types ?? [];
    // The witness to show is the first of the first group: stale-write-accepted must be that group.
    if (r.code === 1 && results.valid === false && types[0] === "stale-write-accepted") {
      const n = results.anomalies?.["stale-write-accepted"]?.length ?? 0;
      return {
        // The fragment highlights the first witness's band in the timeline (CSS :target).
        url: `${pathToFileURL(join(dir, "report.html")).href}#tl-w0-0`,
        from: `fencecheck ${args.slice(0, -2).join(" ")}: INVALID, stale-write-accepted ×${n} (run ${relative(store, dir)}), shown at #tl-w0-0`,
      };
    }
    say(`  seed ${seed}: exit ${r.code}, anomalies ${types.join(", ") || "none"}; not the INVALID run with a stale write first that the picture is for, trying the next seed`);
  }
  throw new Error(`no seed of ${INVALID_SEEDS.join(", ")} gave an INVALID run with stale-write-accepted`);
}

async function soak(store: string): Promise<{ url: string; from: string }> {
  for (const seed of SOAK_SEEDS) {
    const args = ["soak", "--preset", "smoke", "--test-count", "1", "--seed", String(seed), "--store", store];
    const r = await fencecheck(args);
    const summary = line(r.out, "Summary");
    if (r.code === 0 && summary && existsSync(summary)) {
      return { url: pathToFileURL(summary).href, from: `fencecheck ${args.slice(0, -2).join(" ")}: every configuration met its expectation (${relative(store, summary)})` };
    }
    say(`  seed ${seed}: the soak exited ${r.code}; the picture is of a soak whose every configuration met its expectation, trying the next seed`);
  }
  throw new Error(`no seed of ${SOAK_SEEDS.join(", ")} gave a smoke soak that met every expectation`);
}

async function experiment(store: string): Promise<{ url: string; from: string }> {
  // keys --quick: 20 s here, and line plots of many points (keys counted against
  // live locks over time, active against lazy expiry). --backends redis keeps the
  // page to the Redis plots, which fit one picture.
  const args = ["experiment", "keys", "--quick", "--backends", "redis", "--store", store];
  const r = await fencecheck(args);
  const report = line(r.out, "Report");
  if (r.code !== 0 || !report || !existsSync(report)) throw new Error(`fencecheck experiment exited ${r.code}${report ? "" : " without a report"}`);
  const html = readFileSync(report, "utf8");
  if (!html.includes('class="xplot"')) throw new Error(`${report} has no plot`);
  return { url: pathToFileURL(report).href, from: `fencecheck ${args.slice(0, -2).join(" ")} (${relative(store, report)})` };
}

const SHOTS: Shot[] = [
  {
    // From the verdict down to the bottom of the timeline: the figures, the witness's
    // sentence and tables, and its band in the timeline, highlighted by the URL's
    // fragment (CSS :target), as a reader sees it after "show in timeline".
    id: "report",
    file: "report-invalid.png",
    make: invalidRun,
    width: 1400,
    scale: 1,
    clip: `
      if (!document.querySelector(".witness:target .band")) throw new Error("no witness band is highlighted");
      const timeline = document.querySelector("#timeline ~ .scroll");
      if (!timeline) throw new Error("no timeline");
      return { x: 0, y: 0, width: document.documentElement.clientWidth, height: Math.ceil(timeline.getBoundingClientRect().bottom + scrollY + 16) };`,
  },
  {
    // The verdict, the configurations with their expectations, and the by-client
    // table; the list of runs below is left out.
    id: "soak",
    file: "soak-summary.png",
    make: soak,
    width: 1400,
    scale: 1,
    clip: `
      const runs = document.getElementById("runs");
      if (!document.getElementById("configurations") || !runs) throw new Error("not a soak summary");
      return { x: 0, y: 0, width: document.documentElement.clientWidth, height: Math.floor(runs.getBoundingClientRect().top + scrollY - 12) };`,
  },
  {
    // The plots: each with its axes, its labels and the legend of its lines.
    id: "experiment",
    file: "experiment-plot.png",
    make: experiment,
    width: 1000,
    scale: 1.5,
    clip: `
      const figures = [...document.querySelectorAll("figure")];
      if (!figures.some((f) => f.querySelector("svg.xplot"))) throw new Error("no plot");
      const boxes = figures.flatMap((f) => [...f.children].map((c) => c.getBoundingClientRect()));
      const left = Math.min(...boxes.map((r) => r.left)) - 24;
      const right = Math.max(...figures.map((f) => (f.querySelector("svg") ?? f).getBoundingClientRect().right)) + 24;
      const top = Math.min(...boxes.map((r) => r.top)) + scrollY - 16;
      const bottom = Math.max(...boxes.map((r) => r.bottom)) + scrollY + 16;
      return { x: Math.floor(left), y: Math.floor(top), width: Math.ceil(right - left), height: Math.ceil(bottom - top) };`,
  },
];

// ---------------------------------------------------------------------------
// Chromium

/** Live processes whose command line mentions `needle` (Chromium's helpers carry the profile's path). */
function processesMentioning(needle: string): number[] {
  const found: number[] = [];
  for (const pid of readdirSync("/proc").filter((d) => /^\d+$/.test(d))) {
    if (Number(pid) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(needle)) found.push(Number(pid));
    } catch {
      // exited meanwhile
    }
  }
  return found;
}

function killGroup(pid: number): void {
  try {
    process.kill(-pid, "SIGKILL");
  } catch {
    // the group is gone already
  }
}

/**
 * Chromium's DevTools protocol over --remote-debugging-pipe (fd 3 in, fd 4 out,
 * messages ended by NUL): one page, its commands in order, its events awaited by name.
 */
class Devtools {
  private next = 1;
  private buffer = "";
  private readonly pending = new Map<number, { done(v: Record<string, unknown>): void; fail(e: Error): void }>();
  private readonly waiters: { method: string; done(): void }[] = [];
  sessionId: string | undefined;

  constructor(private readonly input: NodeJS.WritableStream, output: NodeJS.ReadableStream) {
    // A Chromium that has gone closes the pipes: what is written then is lost, not thrown (its exit is reported apart).
    input.on("error", () => undefined);
    output.on("error", () => undefined);
    output.on("data", (chunk: Buffer) => {
      this.buffer += chunk.toString("utf8");
      let end: number;
      while ((end = this.buffer.indexOf("\0")) >= 0) {
        const message = JSON.parse(this.buffer.slice(0, end)) as { id?: number; method?: string; result?: Record<string, unknown>; error?: { message: string } };
        this.buffer = this.buffer.slice(end + 1);
        if (message.id !== undefined) {
          const p = this.pending.get(message.id);
          this.pending.delete(message.id);
          if (message.error) p?.fail(new Error(message.error.message));
          else p?.done(message.result ?? {});
        } else if (message.method) {
          for (const w of this.waiters.filter((x) => x.method === message.method)) {
            this.waiters.splice(this.waiters.indexOf(w), 1);
            w.done();
          }
        }
      }
    });
  }

  send(method: string, params: Record<string, unknown> = {}, session = true): Promise<Record<string, unknown>> {
    const id = this.next++;
    const message = { id, method, params, ...(session && this.sessionId ? { sessionId: this.sessionId } : {}) };
    return new Promise((done, fail) => {
      this.pending.set(id, { done, fail });
      this.input.write(`${JSON.stringify(message)}\0`);
    });
  }

  event(method: string): Promise<void> {
    return new Promise((done) => this.waiters.push({ method, done }));
  }

  /** The value of an expression in the page (awaited when it is a promise). */
  async evaluate<T>(expression: string): Promise<T> {
    const r = (await this.send("Runtime.evaluate", { expression, awaitPromise: true, returnByValue: true })) as { result: { value: T }; exceptionDetails?: { exception?: { description?: string }; text: string } };
    if (r.exceptionDetails) throw new Error(`in the page: ${r.exceptionDetails.exception?.description ?? r.exceptionDetails.text}`);
    return r.result.value;
  }
}

/** The part of a page a picture shows, in CSS pixels of the document. */
interface Clip {
  x: number;
  y: number;
  width: number;
  height: number;
}

/**
 * One picture of `url` with a fresh profile: the page loaded in a window `width`
 * CSS pixels wide, its animations run to their end, then `clip` (an expression
 * evaluated in the page that gives the region to show) taken at `scale` device
 * pixels per CSS pixel. Chromium is closed through the protocol; whatever it left
 * running is killed, and the profile removed.
 */
async function screenshot(url: string, file: string, width: number, clip: string, scale: number): Promise<Clip> {
  if (stopping) throw new Error("interrupted");
  const profile = mkdtempSync(join(tmpdir(), "fencecheck-chromium-"));
  const args = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", `--user-data-dir=${profile}`, "--hide-scrollbars",
    `--window-size=${width},${HEIGHT}`, "--remote-debugging-pipe", "about:blank",
  ];
  // Its own process group, so that a hung Chromium and all its helpers go at once.
  const child = spawn(chromiumBinary(), args, { stdio: ["ignore", "ignore", "pipe", "pipe", "pipe"], detached: true });
  const pid = child.pid;
  if (pid) live.add(-pid);
  let err = "";
  child.stderr?.on("data", (c: Buffer) => void (err += c.toString("utf8")));
  const exited = new Promise<number | null>((done) => {
    child.on("error", (e) => {
      err += String(e);
      done(null);
    });
    child.on("close", (c) => done(c));
  });
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, fail) => {
    timer = setTimeout(() => fail(new Error(`chromium took more than ${CHROMIUM_TIMEOUT_MS / 1000} s`)), CHROMIUM_TIMEOUT_MS);
  });
  const gone = exited.then((code) => {
    throw new Error(`chromium exited ${code}:\n${err.trim().split("\n").slice(-6).join("\n")}`);
  });
  const dt = new Devtools(child.stdio[3] as NodeJS.WritableStream, child.stdio[4] as NodeJS.ReadableStream);
  try {
    const work = (async () => {
      const { targetId } = (await dt.send("Target.createTarget", { url: "about:blank" })) as { targetId: string };
      dt.sessionId = ((await dt.send("Target.attachToTarget", { targetId, flatten: true })) as { sessionId: string }).sessionId;
      await dt.send("Emulation.setDeviceMetricsOverride", { width, height: HEIGHT, deviceScaleFactor: scale, mobile: false });
      await dt.send("Page.enable");
      const loaded = dt.event("Page.loadEventFired");
      await dt.send("Page.navigate", { url });
      await loaded;
      // Fonts in, every animation at its end (the witness's pulse), and the page at its top.
      await dt.evaluate("document.fonts.ready.then(() => { document.getAnimations().forEach((a) => a.finish()); scrollTo(0, 0); return true; })");
      const region = await dt.evaluate<Clip>(`(() => { ${clip} })()`);
      const shot = (await dt.send("Page.captureScreenshot", { format: "png", clip: { ...region, scale: 1 }, captureBeyondViewport: true })) as { data: string };
      writeFileSync(file, Buffer.from(shot.data, "base64"));
      return region;
    })();
    work.catch(() => undefined);
    return await Promise.race([work, timeout, gone]);
  } finally {
    clearTimeout(timer);
    gone.catch(() => undefined);
    // Asked to close, it exits within a moment; what is still there after that is killed.
    void dt.send("Browser.close", {}, false).catch(() => undefined);
    await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
    if (pid) {
      killGroup(pid);
      live.delete(-pid);
    }
    const left = processesMentioning(profile);
    for (const p of left) {
      try {
        process.kill(p, "SIGKILL");
      } catch {
        // gone
      }
    }
    if (left.length) say(`  (Chromium left ${left.length} process(es) behind: ${left.join(", ")}; killed)`);
    rmSync(profile, { recursive: true, force: true });
  }
}

function pngSize(file: string): { width: number; height: number } {
  const b = readFileSync(file);
  if (b.length < 24 || b.toString("latin1", 1, 4) !== "PNG") throw new Error(`${file} is not a PNG`);
  return { width: b.readUInt32BE(16), height: b.readUInt32BE(20) };
}

// ---------------------------------------------------------------------------

function options(argv: string[]): { only: Set<string>; keep: boolean } {
  let only = new Set<string>(SHOTS.map((s) => s.id));
  let keep = false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--keep") keep = true;
    else if (a === "--only" || a.startsWith("--only=")) {
      const v = a === "--only" ? argv[++i] : a.slice("--only=".length);
      only = new Set((v ?? "").split(",").filter(Boolean));
      const unknown = [...only].filter((o) => !SHOTS.some((s) => s.id === o));
      if (unknown.length || only.size === 0) throw new Error(`--only: one or more of ${SHOTS.map((s) => s.id).join(", ")}`);
    } else if (a === "--help" || a === "-h") {
      say("Usage: tsx scripts/screenshots.ts [--only report,soak,experiment] [--keep]\nMakes docs/images/*.png from runs of its own with headless Chromium.");
      process.exit(0);
    } else throw new Error(`unknown argument ${a}`);
  }
  return { only, keep };
}

async function main(): Promise<number> {
  const started = performance.now();
  const { only, keep } = options(process.argv.slice(2));

  // The command the runs use, up to date with the sources (as every npm script has it).
  const build = spawnSync(process.execPath, [join(REPO, "scripts", "build.mjs"), "--if-stale", "--quiet"], { cwd: REPO, stdio: "inherit" });
  if (build.status !== 0) throw new Error(`node scripts/build.mjs exited ${build.status}`);

  try {
    await ensure([CHROMIUM], { say });
  } catch (err) {
    say(`screenshots: ${(err as Error).message}`);
    return 1;
  }
  const version = spawnSync(chromiumBinary(), ["--version"], { encoding: "utf8" }).stdout?.trim();
  say(`screenshots: ${version || chromiumBinary()}`);

  const store = mkdtempSync(join(tmpdir(), "fencecheck-screenshots-"));
  // Interrupted: Chromium goes at once; a run is asked to stop (SIGINT: it heals,
  // stops its servers and says so) and waited for before its store is removed.
  const stop = (): void => {
    // A terminal sends Ctrl-C to the whole group (npm, tsx, this, the run), and tsx passes it on again: the first one counts.
    if (stopping) return;
    stopping = true;
    for (const pid of live) {
      if (pid < 0) killGroup(-pid);
      else {
        try {
          process.kill(pid, "SIGINT");
        } catch {
          // gone
        }
      }
    }
    const deadline = Date.now() + 30_000;
    const poll = setInterval(() => {
      if ([...live].some((p) => p > 0) && Date.now() < deadline) return;
      clearInterval(poll);
      if (!keep) rmSync(store, { recursive: true, force: true });
      process.exit(130);
    }, 200);
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
  mkdirSync(OUT, { recursive: true });
  const wrote: string[] = [];
  const failed: string[] = [];
  try {
    for (const shot of SHOTS.filter((s) => only.has(s.id))) {
      const t0 = performance.now();
      try {
        const { url, from } = await shot.make(store);
        const tmp = join(store, shot.file);
        await screenshot(url, tmp, shot.width, shot.clip, shot.scale);
        const { width, height } = pngSize(tmp);
        const bytes = statSync(tmp).size;
        const target = join(OUT, shot.file);
        copyFileSync(tmp, target);
        const note = bytes > MAX_BYTES ? ` (over ${MAX_BYTES / 1024} KB: narrow its clip or lower its scale)` : "";
        wrote.push(`${relative(REPO, target)}  ${width}x${height}, ${Math.round(bytes / 1024)} KB${note}, ${((performance.now() - t0) / 1000).toFixed(0)} s\n    from: ${from}`);
        say(`screenshots: wrote ${relative(REPO, target)}`);
      } catch (err) {
        if (stopping) break;
        failed.push(`${shot.file}: ${(err as Error).message}`);
        say(`screenshots: ${shot.file} not written: ${(err as Error).message}`);
      }
    }
  } finally {
    if (keep) say(`screenshots: the runs are kept in ${store}`);
    else rmSync(store, { recursive: true, force: true });
  }
  if (stopping) {
    say(`screenshots: interrupted${keep ? "" : "; the runs' store is removed"}`);
    return 130;
  }
  say("");
  for (const w of wrote) say(w);
  for (const f of failed) say(`NOT WRITTEN ${f}`);
  say(`screenshots: ${wrote.length} picture(s) in ${((performance.now() - started) / 1000).toFixed(0)} s${failed.length ? `, ${failed.length} failed` : ""}`);
  return failed.length ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`screenshots: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
