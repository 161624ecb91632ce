// npm run serve over a temporary store holding two recorded runs (copied from
// histories/fixtures and checked again so they have a report): the list shows their
// verdicts, files and reports are served, and nothing outside the store is, by
// `..` in any spelling or by a symlink that leads out.
import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { cpSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { join } from "node:path";
import { REPO, runCli, tempRunDir, waitFor, type CliRun } from "./helpers.ts";
import { renderSummaryHtml, summarize, type RunRecord, type SoakPlan } from "../soak/index.ts";

const BAD = "redis-fenced-write-none-fence-off/20261122T025317.857Z";
const GOOD = "redis-fenced-write-none-fence-on/20261122T025330.000Z";
const HOSTILE = "hostile/20261122T030000.000Z";
const SOAK = "soaks/20261124T020000.000Z";
const SOAK_RUN = "runs/cfg/redis-fenced-write-none-fence-off/20261124T020001.000Z";

let store: string;
let outside: string;
let server: CliRun;
let port = 0;

function get(path: string, method = "GET"): Promise<{ status: number; type: string; body: string; headers: Record<string, unknown> }> {
  // http.request sends the path as given: no client-side resolving of `..`.
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, path, method }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (d) => (body += d));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, type: String(res.headers["content-type"]), body, headers: res.headers }));
    });
    req.on("error", reject);
    req.end();
  });
}

beforeAll(async () => {
  store = tempRunDir("fc-serve-");
  outside = tempRunDir("fc-serve-outside-");
  const fixture = (kind: string, name: string, rel: string) => cpSync(join(REPO, "histories/fixtures", kind, name), join(store, rel), { recursive: true });
  fixture("bad", "recorded-redis-k1-two-clients-fence-off", BAD);
  fixture("good", "recorded-redis-k1-two-clients-fence-on", GOOD);
  for (const rel of [BAD, GOOD]) await runCli("check", [join(store, rel)]).exit;
  mkdirSync(join(store, BAD, "logs"));
  writeFileSync(join(store, BAD, "logs", "worker-1.log"), "worker 1 says hello\n");

  // Strings a run could carry (a test name, an anomaly type) that must stay text.
  mkdirSync(join(store, HOSTILE), { recursive: true });
  writeFileSync(join(store, HOSTILE, "run.json"), JSON.stringify({ test: "<script>alert(1)</script>" }));
  writeFileSync(join(store, HOSTILE, "results.json"), JSON.stringify({ valid: false, anomaly_types: ['<img src=x onerror="alert(2)">'] }));

  // Ways out of the store: a run directory outside it, linked in; a log linked to a secret.
  writeFileSync(join(outside, "secret.txt"), "SECRET\n");
  writeFileSync(join(outside, "run.json"), JSON.stringify({ test: "outside" }));
  writeFileSync(join(outside, "history.ndjson"), "SECRET\n");
  symlinkSync(outside, join(store, "linked-out"));
  symlinkSync(join(outside, "secret.txt"), join(store, BAD, "logs", "secret.log"));
  symlinkSync(join(store, BAD), join(store, "latest"));

  // A soak: its plan, summary and page as `npm run soak` writes them, one stored run under it.
  const plan: SoakPlan = {
    format: 1,
    kind: "soak",
    matrix: { name: "nightly", source: "preset nightly", hash: "h", configurations: [{ name: "cfg", description: "", options: {}, expect: { kind: "valid" } }] },
    options: { test_count: 1, time_limit_s: null, time_budget_s: null, seed: 1, only: null },
    started: "2026-11-24T02:00:00.000Z",
    command: [],
    runs: [{ config: "cfg", index: 0, seed: 9, argv: [] }],
  };
  fixture("bad", "recorded-redis-k1-two-clients-fence-off", `${SOAK}/${SOAK_RUN}`);
  await runCli("check", [join(store, SOAK, SOAK_RUN)]).exit;
  mkdirSync(join(store, SOAK, "output"));
  writeFileSync(join(store, SOAK, "output", "cfg-0.log"), "the run's terminal output\n");
  const record: RunRecord = { config: "cfg", index: 0, seed: 9, status: "invalid", exit_code: 1, run_dir: SOAK_RUN, output: "output/cfg-0.log", wall_s: 3, anomaly_types: ["stale-write-accepted"], anomaly_counts: { "stale-write-accepted": 1 }, acquire_ms: null, faults: {}, argv: [] };
  const summary = summarize({ plan, records: [record], notRun: [], finished: new Date(), wallS: 3, interrupted: false, diskBytes: null });
  writeFileSync(join(store, SOAK, "soak.json"), JSON.stringify(plan));
  writeFileSync(join(store, SOAK, "summary.json"), JSON.stringify(summary));
  writeFileSync(join(store, SOAK, "summary.html"), renderSummaryHtml(summary));

  server = runCli("serve", ["--port", "0", "--store", store]);
  await waitFor(() => /serving http:\/\/127\.0\.0\.1:\d+\//.test(server.stdout()), 20_000);
  port = Number(/127\.0\.0\.1:(\d+)/.exec(server.stdout())?.[1]);
  expect(port, server.stderr()).toBeGreaterThan(0);
});

afterAll(async () => {
  if (server?.child.pid) process.kill(-server.child.pid, "SIGTERM");
  expect(await server.exit).toBe(0);
});

describe("npm run serve", () => {
  it("lists the runs with their verdicts and anomaly types", async () => {
    const r = await get("/");
    expect(r.status).toBe(200);
    expect(r.type).toContain("text/html");
    const row = (rel: string) => r.body.split("<tr>").find((tr) => tr.includes(`/runs/${rel}/`)) ?? "";
    expect(row(BAD)).toContain(">INVALID<");
    expect(row(BAD)).toContain("stale-write-accepted");
    expect(row(BAD)).toContain(`/runs/${BAD}/report.html`);
    expect(row(GOOD)).toContain(">VALID<");
    // The symlinks are not walked: the outside run is not listed, `latest` is not doubled.
    expect(r.body).not.toContain("linked-out");
    expect(r.body).not.toContain("/runs/latest/");
  });

  it("lists soaks beside the runs, serves a soak's summary page, and the runs and output it links", async () => {
    const list = await get("/");
    const soakRow = list.body.split("<tr>").find((tr) => tr.includes(`/runs/${SOAK}/summary.html`)) ?? "";
    expect(soakRow).toContain("matrix nightly");
    expect(soakRow).toContain("exit 1");
    expect(soakRow).toContain("<code>cfg</code>");
    // The soak's run is on the soak's page, not among the single runs.
    expect(list.body).not.toContain(`/runs/${SOAK}/${SOAK_RUN}/`);
    const page = await get(`/runs/${SOAK}/summary.html`);
    expect(page.status).toBe(200);
    expect(page.type).toContain("text/html");
    const hrefs = [...page.body.matchAll(/href="([^"#]+)"/g)].map((m) => m[1]);
    expect(hrefs).toContain(`${SOAK_RUN}/report.html`);
    for (const href of hrefs) expect((await get(`/runs/${SOAK}/${href}`)).status, href).toBe(200);
    expect((await get(`/runs/${SOAK}/output/cfg-0.log`)).body).toBe("the run's terminal output\n");
    expect(JSON.parse((await get(`/runs/${SOAK}/summary.json`)).body).exit_code).toBe(1);
    expect((await get(`/runs/${SOAK}/`)).status).toBe(301);
    expect((await get(`/runs/${SOAK}/output/../../../../etc/passwd`)).status).toBe(404);
  });

  it("escapes what runs wrote", async () => {
    const r = await get("/");
    expect(r.body).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
    expect(r.body).toContain("&lt;img src=x onerror=&quot;alert(2)&quot;&gt;");
    expect(r.body).not.toContain("<script>");
    expect(r.body).not.toContain("<img");
    const page = await get(`/runs/${HOSTILE}/`);
    expect(page.status).toBe(200);
    expect(page.body).not.toContain("<script>");
  });

  it("serves a run's page, report, history, results and logs", async () => {
    const page = await get(`/runs/${BAD}/`);
    expect(page.body).toContain(`/runs/${BAD}/history.ndjson`);
    expect(page.body).toContain(`/runs/${BAD}/logs/worker-1.log`);
    const report = await get(`/runs/${BAD}/report.html`);
    expect(report.status).toBe(200);
    expect(report.type).toContain("text/html");
    expect(report.body).toBe(readFileSync(join(store, BAD, "report.html"), "utf8"));
    const history = await get(`/runs/${BAD}/history.ndjson`);
    expect(history.type).toContain("text/plain");
    expect(history.headers["x-content-type-options"]).toBe("nosniff");
    expect(history.body).toBe(readFileSync(join(store, BAD, "history.ndjson"), "utf8"));
    expect(JSON.parse((await get(`/runs/${BAD}/results.json`)).body).valid).toBe(false);
    expect((await get(`/runs/${BAD}/logs/worker-1.log`)).body).toBe("worker 1 says hello\n");
    // `latest` links inside the store, so following it is fine.
    expect((await get("/runs/latest/results.json")).status).toBe(200);
    expect((await get(`/runs/${BAD}`)).status).toBe(301);
  });

  it("refuses everything outside the store with 404", async () => {
    for (const path of [
      "/runs/../../../../etc/passwd",
      "/runs/%2e%2e/%2e%2e/%2e%2e/etc/passwd",
      "/runs/x%2f..%2f..%2f..%2fetc/passwd",
      `/runs/${BAD}/../../../../etc/passwd`,
      `/runs/${BAD}/logs/../../../../../etc/passwd`,
      "/runs/linked-out/history.ndjson",
      "/runs/linked-out/secret.txt",
      "/runs/linked-out/",
      `/runs/${BAD}/logs/secret.log`,
      "/../etc/passwd",
      "/etc/passwd",
      `/runs/${BAD}/nonexistent.json`,
    ]) {
      const r = await get(path);
      expect(r.status, path).toBe(404);
      expect(r.body, path).not.toContain("SECRET");
      expect(r.body, path).not.toContain("root:");
    }
  });

  it("is read-only", async () => {
    expect((await get(`/runs/${BAD}/results.json`, "PUT")).status).toBe(405);
    expect((await get("/", "POST")).status).toBe(405);
  });
});

describe("npm run serve options", () => {
  for (const [args, message] of [
    [["--port", "8080"], /--port 8080 is reserved/],
    [["--port", "8474"], /--port 8474 is reserved/],
    [["--port", "http"], /--port must be an integer/],
    [["--store", "/nonexistent/fc-store"], /--store \/nonexistent\/fc-store does not exist/],
    [["stray"], /unexpected argument "stray"/],
  ] as Array<[string[], RegExp]>) {
    it(`refuses ${args.join(" ")} with 254`, async () => {
      const r = runCli("serve", ["--port", "0", ...args]);
      expect(await r.exit).toBe(254);
      expect(r.stderr()).toMatch(message);
    });
  }
});
