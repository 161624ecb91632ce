// A DynamoDB of the user's as the clients reach it (--deploy external): each of
// the three clients signs for the service's URL with the account given, keeps
// its items in the run's table, and dials only the endpoint it was given (the
// worker's link through the fault proxy). Here the URL's own port has nothing
// behind it, so a request that went there would fail; a relay on the endpoint
// records the Host and Authorization headers on their way to a dynalite. Then
// the https agent on its own, against a TLS server with a certificate made here.
import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { get as httpsGet } from "node:https";
import { createServer as createNetServer, connect as netConnect, type Server } from "node:net";
import { createServer as createTlsServer } from "node:tls";
import { ProcessGroup } from "../../../cluster/processes.ts";
import { PortPlan } from "../../../cluster/ports.ts";
import { startDynalite } from "../server.ts";
import type { ServerNode } from "../../../cluster/cluster.ts";
import { dynamoClient, ensureLockTable, LockTable, type DynamoAccess } from "../connection.ts";
import { CLIENTS } from "../../index.ts";
import { proxiedAgent } from "../proxied-agent.ts";
import { rng } from "../../../lib/index.ts";
import { tempRunDir } from "../../../test/helpers.ts";
import { selfSignedCert } from "../../../test/tls-cert.ts";

const dir = tempRunDir("fc-dynamo-access-");
const group = new ProcessGroup(dir);
let node: ServerNode;
let relay: { server: Server; port: number; heads: string[] };
let deadPort: number;

/** A port nothing listens on. */
async function freePort(): Promise<number> {
  const s = createNetServer();
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  const port = (s.address() as { port: number }).port;
  await new Promise((r) => s.close(r));
  return port;
}

beforeAll(async () => {
  ({ node } = await startDynalite(group, new PortPlan(0), { runDir: dir, name: "theirs", persistent: false }));
  const c = dynamoClient(node, 5000);
  await ensureLockTable(c, "the_runs_table").finally(() => c.destroy());
  const heads: string[] = [];
  const server = createNetServer((socket) => {
    const upstream = netConnect(node.port, node.host);
    socket.on("data", (d: Buffer) => heads.push(d.toString("latin1")));
    socket.pipe(upstream).pipe(socket);
    const end = () => (socket.destroy(), upstream.destroy());
    socket.on("error", end);
    upstream.on("error", end);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  relay = { server, port: (server.address() as { port: number }).port, heads };
  deadPort = await freePort();
}, 30_000);

afterAll(async () => {
  relay?.server.close();
  await group.stopAll();
});

describe("the DynamoDB clients on a service of the user's", () => {
  it.each(["dynamodb-cas", "dynamodb-rvn", "dynamodb-lock-client"])("%s: signs for the URL with the account given, in the run's table, through the endpoint", async (name) => {
    relay.heads.length = 0;
    const access: DynamoAccess = {
      url: `http://localhost:${deadPort}`,
      account: { region: "eu-west-3", credentials: { accessKeyId: "AKIDACCESSTEST", secretAccessKey: "s" } },
      table: "the_runs_table",
    };
    const create = await CLIENTS[name].load();
    const lock = create({ id: 0, endpoints: [{ name: "dynamodb-1", host: "127.0.0.1", port: relay.port }], service: { dynamodb: access }, ownerPrefix: `c-${name}`, commandTimeoutMs: 2000, rng: rng(1, "lock", 0), options: {} });
    const key = `k-${name}`;
    const got = await lock.acquire(key, 1000, 500);
    expect(got.type, JSON.stringify(got)).toBe("ok");
    if (got.type === "ok") expect((await lock.release(key, got.value)).type).toBe("ok");
    await lock.close();
    const hosts = relay.heads.flatMap((h) => [...h.matchAll(/\r\nhost: *([^\r]+)/gi)].map((m) => m[1]));
    const credentials = relay.heads.flatMap((h) => [...h.matchAll(/Credential=([^,\s]+)/g)].map((m) => m[1].split("/")));
    expect(hosts.length).toBeGreaterThan(0);
    expect(new Set(hosts)).toEqual(new Set([`localhost:${deadPort}`]));
    expect(new Set(credentials.map(([key, , region, service]) => `${key} ${region} ${service}`))).toEqual(new Set(["AKIDACCESSTEST eu-west-3 dynamodb"]));
    // The item is in the run's table (there is no fencecheck_locks on this server).
    const table = new LockTable(node, 2000, { ...access, url: `http://${node.host}:${node.port}` });
    const item = await table.read(key);
    table.close();
    expect(item.ok && item.out?.lockKey).toBe(key);
  });

  it("the https agent: TLS to the endpoint, SNI and the certificate checked for the URL's host, the Host header the URL's", async () => {
    const tls = selfSignedCert("DNS:localhost,IP:127.0.0.1");
    const seen: Array<{ servername: unknown; host: string }> = [];
    const server = createTlsServer({ key: tls.key, cert: tls.cert }, (socket) => {
      socket.once("data", (data: Buffer) => {
        seen.push({ servername: (socket as { servername?: unknown }).servername, host: /\r\nhost: *([^\r]+)/i.exec(data.toString("latin1"))?.[1] ?? "" });
        socket.end("HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok");
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const via = { host: "127.0.0.1", port: (server.address() as { port: number }).port };
    const fetchVia = (url: string) =>
      new Promise<number>((resolve, reject) => {
        const agent = proxiedAgent(new URL(url), via);
        httpsGet(url, { agent, ca: tls.cert }, (res) => {
          res.resume();
          res.on("end", () => resolve(res.statusCode ?? 0));
        }).on("error", reject);
      });
    try {
      expect(await fetchVia(`https://localhost:${deadPort}/`)).toBe(200);
      // An address: no SNI (RFC 6066), the certificate checked for the address.
      expect(await fetchVia(`https://127.0.0.1:${deadPort}/`)).toBe(200);
      expect(seen).toEqual([
        { servername: "localhost", host: `localhost:${deadPort}` },
        { servername: false, host: `127.0.0.1:${deadPort}` },
      ]);
      // A certificate that is not the URL's host's is refused, whatever address the socket dialed.
      await expect(fetchVia(`https://elsewhere.invalid:${deadPort}/`)).rejects.toThrow(/altnames|does not match/i);
    } finally {
      server.close();
    }
  });
});
