// A fencecheck lock adapter module (TypeScript or JavaScript, docs/own-lock.md)
// run as an adapter program: speaks the adapter protocol (docs/adapter-protocol.md)
// on standard input and output, one JSON message a line. It lets the same lock
// code be tested in the worker's process and across the protocol, which is how
// bench:protocol measures what the protocol costs, and it is a small, complete
// example of a program that speaks it.
//
//   node --import tsx bridge.mjs path/to/adapter.ts
//
// Self-contained on purpose: it needs nothing of fencecheck but the protocol.
import { createInterface } from "node:readline";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";

const modulePath = process.argv[2];
if (!modulePath) {
  process.stderr.write("usage: bridge.mjs <adapter module>\n");
  process.exit(2);
}
const mod = await import(pathToFileURL(resolve(modulePath)).href);
const adapter = mod.default && typeof mod.default === "object" ? mod.default : mod;

/** Standard output carries messages only. */
const send = (message) => process.stdout.write(JSON.stringify(message) + "\n");

/** A seeded generator (mulberry32) with the two draws adapters use. */
function rngOf(seed) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    between: (lo, hi) => lo + (hi - lo) * next(),
    int: (lo, hi) => lo + Math.floor((hi - lo + 1) * next()),
    pick: (items) => items[Math.floor(items.length * next())],
    exp: (mean) => -mean * Math.log(1 - next()),
  };
}

let client = null;
/** The holds this program was granted, by owner: renew and release hand the adapter its own Hold back. */
const holds = new Map();

/** A thrown error as a short phrase: its code, or the first line of its message. */
const phrase = (err) => (typeof err?.code === "string" ? err.code : String(err?.message ?? err).split("\n")[0]) || "error";

/** An Outcome of the adapter as a reply. */
function reply(outcome, ok) {
  if (outcome.type === "ok") return { type: "ok", ...ok(outcome.value) };
  return { type: "fail", error: outcome.error, ...(outcome.value ?? {}) };
}

async function handle(req) {
  switch (req.type) {
    case "init":
      client = adapter.create({
        id: req.client,
        endpoints: req.endpoints,
        ownerPrefix: req.owner_prefix,
        commandTimeoutMs: req.command_timeout_ms,
        rng: rngOf(req.seed * 31 + req.client),
        options: {},
      });
      return { type: "init_ok", fences: adapter.fences, renew: "explicit", library: `fencecheck node bridge for ${modulePath}` };
    case "acquire":
      return reply(await client.acquire(req.key, req.ttl_ms, req.wait_ms), (hold) => {
        holds.set(hold.owner, hold);
        return { owner: hold.owner, fence: hold.fence, ttl_ms: hold.ttlMs, ...hold.extra };
      });
    case "renew": {
      const hold = holds.get(req.owner);
      if (!hold) return { type: "fail", error: "not-owner" };
      return reply(await client.renew(req.key, hold, req.ttl_ms), (v) => ({ ttl_ms: v.ttlMs }));
    }
    case "release": {
      const hold = holds.get(req.owner);
      if (!hold) return { type: "fail", error: "not-owner" };
      holds.delete(req.owner);
      return reply(await client.release(req.key, hold), (v) => ({ released: v.released, ...(v.lost ? { lost: v.lost } : {}) }));
    }
    case "close":
      await client?.close();
      return { type: "ok" };
    default:
      return { type: "error", error: `unknown request ${JSON.stringify(req.type)}` };
  }
}

// One request at a time, as the protocol sends them.
for await (const line of createInterface({ input: process.stdin, crlfDelay: Infinity })) {
  const req = JSON.parse(line);
  let answer;
  try {
    answer = await handle(req);
  } catch (err) {
    // Thrown: the adapter cannot know what happened.
    answer = { type: "error", error: phrase(err) };
  }
  send({ in_reply_to: req.id, ...answer });
  if (req.type === "close") break;
}
await client?.close().catch(() => {});
process.exit(0);
