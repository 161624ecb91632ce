// Three real etcd members behind the fault proxy: a member cut off from the others
// with block_from really loses its quorum (it cannot commit, and never sees what
// the others commit meanwhile), the other two elect a new leader and go on, and a
// heal brings everyone back. Killed members come back on their port and data.
import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Etcd3 } from "etcd3";
import { ProcessGroup } from "../../../cluster/processes.ts";
import { PortPlan } from "../../../cluster/ports.ts";
import { ETCD_SERVER } from "../programs.ts";
import { startEtcdCluster, type EtcdCluster } from "../server.ts";
import { startProxyServer, type ProxyServer } from "../../../proxy/index.ts";
import { tempRunDir, processesMentioning, waitFor, eventually } from "../../../test/helpers.ts";

let dir: string;
let group: ProcessGroup;
let proxy: ProxyServer;
let cluster: EtcdCluster;
const clients: Etcd3[] = [];

/** A client of one member only, each call sent once with a deadline. */
function direct(name: string, timeoutMs = 1500): Etcd3 {
  const m = cluster.nodes.find((n) => n.name === name)!;
  const c = new Etcd3({
    hosts: [`http://127.0.0.1:${m.port}`],
    faultHandling: { global: { execute: (fn: (ctx: unknown) => unknown) => Promise.resolve(fn({ signal: new AbortController().signal })) } as never },
    defaultCallOptions: () => ({ deadline: new Date(Date.now() + timeoutMs) }),
    grpcOptions: { "grpc.use_local_subchannel_pool": 1 },
  });
  clients.push(c);
  return c;
}

/** What the member has applied itself, without asking a leader. */
const localValue = async (name: string, key: string): Promise<string | null> => direct(name).get(key).serializable(true).string();

beforeAll(async () => {
  dir = tempRunDir("fc-etcd-");
  group = new ProcessGroup(dir);
  proxy = await startProxyServer({ port: 0 });
  cluster = await startEtcdCluster({ group, ports: new PortPlan(0), runDir: dir, toxiproxyUrl: proxy.url });
});

afterAll(async () => {
  for (const c of clients) c.close();
  await group?.stopAll();
  await proxy?.close();
  expect(processesMentioning(dir)).toEqual([]);
});

describe("an etcd cluster", () => {
  it("has three healthy members on ports of its own, with hex ids, a leader, and data and logs in the run directory", async () => {
    expect(cluster.nodes.map((n) => n.name)).toEqual(["etcd-1", "etcd-2", "etcd-3"]);
    for (const n of cluster.nodes) {
      expect(n.id).toMatch(/^[0-9a-f]+$/);
      for (const p of [n.port, n.peerPort, n.peerProxyPort]) expect(ETCD_SERVER.defaultPorts).not.toContain(p);
      expect(await cluster.healthy(n.name)).toBe(true);
      expect(existsSync(join(dir, "data", n.name, "member"))).toBe(true);
      expect(readFileSync(join(dir, "logs", `${n.name}.log`), "utf8")).toContain(n.id);
    }
    expect(cluster.nodes.map((n) => n.name)).toContain(await cluster.leader());
  });

  it("a leader cut off from the other members cannot commit; the other two elect a new leader and commit; a heal brings it back", async () => {
    const old = (await cluster.leader())!;
    const rest = cluster.nodes.map((n) => n.name).filter((n) => n !== old);
    await cluster.peers.partition([[old], rest]);
    try {
      // The isolated member takes the put but cannot get it committed.
      await expect(direct(old, 2000).put("fc/isolated").value("from-the-minority")).rejects.toThrow();
      const next = await eventually(async () => {
        const l = await cluster.leader();
        return l && l !== old ? l : null;
      });
      expect(rest).toContain(next);
      for (const n of rest) await direct(n, 3000).put(`fc/majority-${n}`).value("committed");
      // Committed by the majority, yet rest[0] may apply it a moment after the put returns.
      expect(await eventually(() => localValue(rest[0], `fc/majority-${rest[1]}`))).toBe("committed");
      // It never heard of what the majority committed, nor committed its own put.
      expect(await localValue(old, `fc/majority-${rest[0]}`)).toBeNull();
      expect(await cluster.healthy(old)).toBe(false);
      expect(await localValue(rest[0], "fc/isolated")).toBeNull();
      const oldLog = readFileSync(join(dir, "logs", `${old}.log`), "utf8");
      expect(oldLog).toMatch(/stepped down to follower since quorum is not active|lost leader/);
      const nextId = cluster.nodes.find((n) => n.name === next)!.id;
      expect(readFileSync(join(dir, "logs", `${next}.log`), "utf8")).toContain(`elected leader ${nextId}`);
    } finally {
      await cluster.peers.heal();
    }
    expect(await eventually(async () => (await Promise.all(cluster.nodes.map((n) => cluster.healthy(n.name)))).every(Boolean))).toBe(true);
    expect(await eventually(() => localValue(old, `fc/majority-${rest[0]}`))).toBe("committed");
  });

  it("a killed member is gone until restart, then comes back on its port with its data", async () => {
    const victim = (await cluster.leader()) === "etcd-3" ? "etcd-2" : "etcd-3";
    await direct("etcd-1", 3000).put("fc/before-kill").value("kept");
    expect(await eventually(() => localValue(victim, "fc/before-kill"))).toBe("kept");
    const pid = group.get(victim)!.pid;
    await cluster.kill(victim);
    expect(group.get(victim)).toBeUndefined();
    expect(await waitFor(() => !processesMentioning(dir).some((p) => p.startsWith(`${pid} `)), 5000)).toBe(true);
    // Two members are a quorum: the cluster goes on without it.
    await direct("etcd-1", 3000).put("fc/while-down").value("yes");
    await cluster.restart(victim);
    expect(group.get(victim)!.pid).not.toBe(pid);
    expect(await eventually(() => cluster.healthy(victim))).toBe(true);
    expect(await localValue(victim, "fc/before-kill")).toBe("kept");
    expect(await eventually(() => localValue(victim, "fc/while-down"))).toBe("yes");
  });
});
