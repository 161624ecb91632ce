// Port forwards a killed container left in iptables (netavark's DNAT rules) are
// removed with the dead run's containers: those of fencecheck networks whose
// container is gone, and their chains; a live container's stay. The rules here
// are real rules in this machine's nat table, written as netavark writes them.
import { describe, it, expect, afterAll } from "vitest";
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { removeStaleForwards, ruleArgs, staleForwards } from "../../docker/dnat.ts";

const LEAKED = "a".repeat(12) + randomBytes(26).toString("hex");
const LIVE = "b".repeat(12) + randomBytes(26).toString("hex");
const line = (net: string, id: string, port: number, chain: string): string =>
  `-A NETAVARK-HOSTPORT-DNAT -p tcp -m tcp --dport ${port} -m comment --comment "dnat name: ${net} id: ${id}" -j ${chain}`;

describe("stale port forwards", () => {
  it("are the forwards of fc- networks whose container is not alive; iptables -D gets the rule's words", () => {
    const rules = [
      "-N NETAVARK-DN-7A1A4D9DC2EAE",
      line("fc-3707-daf64a", LEAKED, 25592, "NETAVARK-DN-7A1A4D9DC2EAE"),
      line("fc-3708-000001", LIVE, 25593, "NETAVARK-DN-1E4C863D4B94B"),
      line("podman", LEAKED, 8080, "NETAVARK-DN-1E4C863D4B94C"),
    ].join("\n");
    expect(staleForwards(rules, (id) => id === LIVE)).toEqual([{ rule: line("fc-3707-daf64a", LEAKED, 25592, "NETAVARK-DN-7A1A4D9DC2EAE"), network: "fc-3707-daf64a", container: LEAKED, chain: "NETAVARK-DN-7A1A4D9DC2EAE" }]);
    expect(ruleArgs(line("fc-1-abcdef", LEAKED, 1, "X"))).toEqual(["NETAVARK-HOSTPORT-DNAT", "-p", "tcp", "-m", "tcp", "--dport", "1", "-m", "comment", "--comment", `dnat name: fc-1-abcdef id: ${LEAKED}`, "-j", "X"]);
  });

  const root = process.getuid?.() === 0 && hasIptables();
  const made: string[][] = [];
  const ipt = (...args: string[]) => execFileSync("iptables", ["-w", "-t", "nat", ...args], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  afterAll(() => {
    for (const undo of made.reverse())
      try {
        ipt(...undo);
      } catch {}
  });

  it.runIf(root)("a leaked forward and its chain are removed from the nat table; a live container's stays", async () => {
    const tag = randomBytes(3).toString("hex").toUpperCase();
    const [leakedChain, liveChain] = [`NETAVARK-DN-FC${tag}1`, `NETAVARK-DN-FC${tag}2`];
    if (!ipt("-S").split("\n").includes("-N NETAVARK-HOSTPORT-DNAT")) {
      ipt("-N", "NETAVARK-HOSTPORT-DNAT");
      made.push(["-X", "NETAVARK-HOSTPORT-DNAT"]);
    }
    for (const c of [leakedChain, liveChain]) {
      ipt("-N", c);
      made.push(["-X", c], ["-F", c]);
      ipt("-A", c, "-p", "tcp", "-j", "DNAT", "--to-destination", "10.255.255.1:80");
    }
    const leaked = line(`fc-1-${tag.toLowerCase()}`, LEAKED, 31001, leakedChain);
    const live = line(`fc-2-${tag.toLowerCase()}`, LIVE, 31002, liveChain);
    for (const r of [leaked, live]) {
      ipt("-A", ...ruleArgs(r));
      made.push(["-D", ...ruleArgs(r)]);
    }
    const removed = await removeStaleForwards(async () => [LIVE], true);
    expect(removed).toContain(`fc-1-${tag.toLowerCase()}`);
    expect(removed).not.toContain(`fc-2-${tag.toLowerCase()}`);
    const after = ipt("-S").split("\n");
    expect(after).not.toContain(leaked);
    expect(after).not.toContain(`-N ${leakedChain}`);
    expect(after).toContain(live);
    expect(after).toContain(`-N ${liveChain}`);
    // Not root, or an engine elsewhere: nothing is touched.
    expect(await removeStaleForwards(async () => [], false)).toEqual([]);
    expect(ipt("-S").split("\n")).toContain(live);
  });
});

function hasIptables(): boolean {
  try {
    execFileSync("iptables", ["-w", "-t", "nat", "-S"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}
