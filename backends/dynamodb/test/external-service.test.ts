// --backend dynamodb --deploy external: a DynamoDB of the user's, here a dynalite
// this test starts itself (no AWS account, DynamoDB Local or LocalStack can be
// reached from here), once as plain http named by --endpoints, once as https
// found in the AWS environment, behind a TLS-terminating server of the test's
// with a self-signed certificate. The run makes its own table, deletes it at
// the end and touches nothing else there; the account reaches the workers and
// never a file of the run; a run without an account is refused before it starts.
import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { readdirSync } from "node:fs";
import { connect as netConnect } from "node:net";
import { createServer as createTlsServer, type Server as TlsServer } from "node:tls";
import { join } from "node:path";
import { ListTablesCommand, type DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { ProcessGroup } from "../../../cluster/processes.ts";
import { PortPlan } from "../../../cluster/ports.ts";
import { startDynalite } from "../server.ts";
import type { ServerNode } from "../../../cluster/cluster.ts";
import { dynamoClient, ensureLockTable, lockTableName } from "../connection.ts";
import { tempRunDir, runCli, eventually, storedRun, filesWith, grantsIn } from "../../../test/helpers.ts";
import { selfSignedCert } from "../../../test/tls-cert.ts";

const SECRET = "not-a-real-secret-7f3a9c";
const ACCOUNT = { AWS_REGION: "eu-west-3", AWS_ACCESS_KEY_ID: "AKIDFENCECHECKTEST", AWS_SECRET_ACCESS_KEY: SECRET };
/** Nothing of the machine's own AWS setup reaches a run of these tests. */
const NO_AWS = Object.fromEntries(
  ["AWS_REGION", "AWS_DEFAULT_REGION", "AWS_PROFILE", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_DYNAMODB", "AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE"].map((k) => [k, undefined]),
);
const short = ["--backend", "dynamodb", "--deploy", "external", "--concurrency", "4", "--workers", "2", "--time-limit", "3", "--nemesis-interval", "1", "--seed", "7"];

let dir: string;
let group: ProcessGroup;
let node: ServerNode;
let admin: DynamoDBClient;
/**
 * The server's tables, asked on a connection of its own: the admin's kept-alive
 * socket sits idle through a run, about as long as dynalite's server keeps an
 * idle connection (Node's 5 s), and reusing it as the server closes it failed a
 * fresh-clone run with "socket hang up".
 */
async function tables(): Promise<string[]> {
  const once = dynamoClient(node, 5000);
  try {
    return (await once.send(new ListTablesCommand({}))).TableNames ?? [];
  } finally {
    once.destroy();
  }
}

beforeAll(async () => {
  dir = tempRunDir("fc-external-dynamo-");
  group = new ProcessGroup(dir);
  ({ node } = await startDynalite(group, new PortPlan(0), { runDir: dir, name: "theirs", persistent: false }));
  admin = dynamoClient(node, 5000);
  await ensureLockTable(admin, "someone_elses_table");
}, 30_000);

afterAll(async () => {
  admin?.destroy();
  await group?.stopAll();
});

describe("--backend dynamodb --deploy external", () => {
  it("a dynalite of the user's through --endpoints, under pause: VALID, its own table made and deleted, someone else's kept, no secret written", async () => {
    const store = tempRunDir("fc-external-dynamo-");
    const cli = runCli("test", [...short, "--endpoints", `dynamodb-1=${node.host}:${node.port}`, "--nemesis", "pause", "--store", store], { ...NO_AWS, ...ACCOUNT });
    expect(await cli.exit, cli.stdout() + cli.stderr()).toBe(0);
    expect(cli.stdout()).toMatch(/^VALID/m);
    const { dir: runDir, run, events } = storedRun(store);
    expect(run.key_prefix).toMatch(/^fencecheck:\d{8}T\d{6}\.\d{3}Z:$/);
    const table = lockTableName(run.key_prefix);
    expect(run.lock_table).toEqual({ name: table, url: `http://${node.host}:${node.port}`, region: "eu-west-3" });
    expect(run.table_removed).toBe(table);
    expect(run.keys_removed).toBeGreaterThan(0);
    expect(grantsIn(events).length).toBeGreaterThan(0);
    expect(events.some((e) => e.f === "start-pause")).toBe(true);
    // The workers reached it through the run's fault proxy.
    expect(run.links.filter((l: { server: string }) => l.server === "dynamodb-1").map((l: { upstream: string }) => l.upstream)).toEqual([`${node.host}:${node.port}`, `${node.host}:${node.port}`]);
    // Neither the run's table nor the preflight's probe table is left; the other one is untouched.
    expect(await tables()).toEqual(["someone_elses_table"]);
    expect(filesWith(runDir, SECRET)).toEqual([]);
  });

  it("https from AWS_ENDPOINT_URL_DYNAMODB: TLS end to end through the fault proxy, the certificate and the Host header the real host's", async () => {
    const tls = await tlsFront(node);
    try {
      const store = tempRunDir("fc-external-dynamo-");
      const url = `https://localhost:${tls.port}`;
      // The v2 SDK's client: its agent dials the proxy too.
      const cli = runCli("test", [...short, "--client", "dynamodb-lock-client", "--nemesis", "latency", "--store", store], { ...NO_AWS, ...ACCOUNT, AWS_ENDPOINT_URL_DYNAMODB: url, NODE_EXTRA_CA_CERTS: tls.certFile });
      expect(await cli.exit, cli.stdout() + cli.stderr()).toBe(0);
      const { dir: runDir, run, events } = storedRun(store);
      expect(run.lock_table.url).toBe(url);
      expect(run.servers).toEqual([{ name: "dynamodb-1", host: "localhost", port: tls.port }]);
      expect(grantsIn(events).length).toBeGreaterThan(0);
      // Connections came from the run (preflight, the table's making and deletion) and from the workers' proxies, all asking for localhost.
      expect(tls.servernames.length).toBeGreaterThan(2);
      expect(new Set(tls.servernames)).toEqual(new Set(["localhost"]));
      expect(new Set(tls.hosts)).toEqual(new Set([`localhost:${tls.port}`]));
      expect(await tables()).toEqual(["someone_elses_table"]);
      expect(filesWith(runDir, SECRET)).toEqual([]);
    } finally {
      tls.server.close();
    }
  });

  it("a run interrupted (SIGTERM) deletes its table too", async () => {
    const store = tempRunDir("fc-external-dynamo-");
    const cli = runCli("test", [...short, "--endpoints", `${node.host}:${node.port}`, "--nemesis", "none", "--time-limit", "60", "--store", store], { ...NO_AWS, ...ACCOUNT });
    const table = await eventually(async () => {
      const { run } = storedRun(store);
      return run.workers ? (run.lock_table.name as string) : null;
    });
    expect(await tables()).toContain(table);
    process.kill(cli.child.pid!, "SIGTERM");
    await cli.exit;
    expect(storedRun(store).run.table_removed).toBe(table);
    expect(await tables()).toEqual(["someone_elses_table"]);
  });

  it.each([
    ["neither a region nor credentials", {}, /no AWS region\. Set AWS_REGION \(or AWS_DEFAULT_REGION\), or "region" in the profile "default" of .*\/\.aws\/config/],
    ["a region and no credentials", { AWS_REGION: "eu-west-3" }, /no AWS credentials\. The SDK's default chain looked at: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY.*\.aws\/credentials/],
  ])("%s: refused (254) before anything starts, nothing made on the server", async (_what, env, message) => {
    const store = tempRunDir("fc-external-dynamo-bad-");
    // An empty home: no ~/.aws files; no instance metadata service answers here either.
    const cli = runCli("test", [...short, "--endpoints", `${node.host}:${node.port}`, "--store", store], { ...NO_AWS, HOME: tempRunDir("fc-home-"), ...env });
    expect(await cli.exit).toBe(254);
    expect(cli.stderr()).toMatch(message);
    expect(readdirSync(store).filter((f) => f !== "logs")).toEqual([]);
    expect(await tables()).toEqual(["someone_elses_table"]);
  });
});

/**
 * A TLS-terminating front for `backend` with a certificate for localhost made
 * here: the SNI name of every connection, and every Host header it saw.
 */
async function tlsFront(backend: ServerNode): Promise<{ server: TlsServer; port: number; certFile: string; servernames: string[]; hosts: string[] }> {
  const { key, cert, certFile } = selfSignedCert("DNS:localhost");
  const servernames: string[] = [];
  const hosts: string[] = [];
  const server = createTlsServer({ key, cert }, (socket) => {
    servernames.push(String((socket as { servername?: unknown }).servername));
    const upstream = netConnect(backend.port, backend.host);
    socket.on("data", (d: Buffer) => {
      for (const m of d.toString("latin1").matchAll(/\r\nhost: *([^\r]+)/gi)) hosts.push(m[1]);
    });
    socket.pipe(upstream).pipe(socket);
    const end = () => (socket.destroy(), upstream.destroy());
    socket.on("error", end);
    upstream.on("error", end);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, port: (server.address() as { port: number }).port, certFile, servernames, hosts };
}
