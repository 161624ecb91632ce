// Port forwards that outlive their container. Podman's netavark publishes a
// container's port as iptables DNAT rules in the nat table, one jump per port
// from NETAVARK-HOSTPORT-DNAT to a chain of the container's, each commented
// "dnat name: <network> id: <container id>". A container killed in a way that
// skips netavark's teardown (its conmon killed with the runner, the engine's
// service restarted mid-removal) leaves them behind. Such a rule is worse than
// litter: a later run's server on 127.0.0.1:P, P drawn as free (nothing listens
// there), never sees its clients, whose connections are forwarded to an address
// that no longer exists. So the removal of a dead run's containers also removes
// the forwards of fencecheck's networks (named fc-...) whose container is gone.
// Only as root on the engine's own machine (a local socket), and only when
// iptables is there; otherwise there is nothing we could see or remove.
import { execFile } from "node:child_process";
import { promisify } from "node:util";

const run = promisify(execFile);

/** One leaked forward: the rule as `iptables -S` prints it, and the chain it jumps to. */
export interface StaleForward {
  rule: string;
  chain: string;
  network: string;
  container: string;
}

const RULE = /^-A NETAVARK-HOSTPORT-DNAT .*--comment "dnat name: (fc-[0-9]+-[0-9a-f]+) id: ([0-9a-f]{12,64})" -j (NETAVARK-DN-[0-9A-F]+)$/;

/** The forwards of fencecheck networks in `iptables -t nat -S` output whose container is not in `alive`. */
export function staleForwards(natRules: string, alive: (containerId: string) => boolean): StaleForward[] {
  const out: StaleForward[] = [];
  for (const line of natRules.split("\n")) {
    const m = RULE.exec(line.trim());
    if (m && !alive(m[2])) out.push({ rule: line.trim(), network: m[1], container: m[2], chain: m[3] });
  }
  return out;
}

/**
 * Remove the forwards `staleForwards` finds, and their chains once nothing jumps
 * to them. Returns the networks they were for; [] where iptables cannot be read
 * (not root, no iptables, an engine on another machine).
 */
export async function removeStaleForwards(containerIds: () => Promise<readonly string[]>, engineIsLocal: boolean): Promise<string[]> {
  if (!engineIsLocal || process.getuid?.() !== 0) return [];
  const nat = await iptables(["-S"]);
  if (nat === null) return [];
  // Rules first, then the containers: a container another run starts meanwhile has
  // rules only after it is listed, so no live container's forward is taken for stale.
  const ids = (await containerIds()).map((id) => id.toLowerCase());
  // The comment holds a full id; a prefix match covers an engine that lists short ones.
  const stale = staleForwards(nat, (id) => ids.some((c) => c.startsWith(id) || id.startsWith(c)));
  for (const f of stale) await iptables(["-D", ...ruleArgs(f.rule)]);
  const left = (await iptables(["-S"])) ?? "";
  for (const chain of new Set(stale.map((f) => f.chain)))
    if (!left.split("\n").some((l) => l.startsWith("-A ") && l.endsWith(`-j ${chain}`))) {
      await iptables(["-F", chain]);
      await iptables(["-X", chain]);
    }
  return [...new Set(stale.map((f) => f.network))];
}

/** `-A CHAIN args...` as iptables -D takes it: the chain and its words, quotes removed. */
export function ruleArgs(rule: string): string[] {
  const words = rule.match(/"[^"]*"|\S+/g) ?? [];
  return words.slice(1).map((w) => (w.startsWith('"') ? w.slice(1, -1) : w));
}

async function iptables(args: string[]): Promise<string | null> {
  try {
    return (await run("iptables", ["-w", "-t", "nat", ...args], { timeout: 10_000 })).stdout;
  } catch {
    return null;
  }
}
