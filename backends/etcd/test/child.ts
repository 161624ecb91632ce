// A lock client in a process of its own, so a test can SIGSTOP it for real (its
// keep-alives freeze with it). Arguments: client name, endpoints as JSON. Reads
// one command per line on stdin and answers each with one JSON line on stdout:
//   acquire <key> <ttlMs> <timeoutMs>   renew <key> <ttlMs>   release <key>   close
import { createInterface } from "node:readline";
import { type Hold } from "../../../clients/index.ts";
import { createClient } from "../../index.ts";
import { rng } from "../../../lib/index.ts";

const [name, endpoints] = process.argv.slice(2);
const lock = await createClient(name, { endpoints: JSON.parse(endpoints), ownerPrefix: `child${process.pid}`, commandTimeoutMs: 2000, rng: rng(1, "child"), options: {} });
let hold: Hold | null = null;
const say = (v: unknown): void => void process.stdout.write(JSON.stringify(v) + "\n");

// No orphan if the test dies: stdin closes with it.
createInterface({ input: process.stdin }).on("line", (line) => {
  const [cmd, key, a, b] = line.trim().split(/\s+/);
  const run = async (): Promise<unknown> => {
    if (cmd === "acquire") {
      const r = await lock.acquire(key, Number(a), Number(b));
      if (r.type === "ok") hold = r.value;
      return r;
    }
    if (cmd === "renew") return lock.renew(key, hold!, Number(a));
    if (cmd === "release") return lock.release(key, hold!);
    await lock.close();
    process.exit(0);
  };
  run().then(say, (err: unknown) => say({ type: "threw", error: String(err) }));
}).on("close", () => process.exit(0));
say({ ready: true });
