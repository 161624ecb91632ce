// What the harness asks a ZooKeeper server directly, on its real client port and
// never through a worker's proxy: the four-letter words `srvr` (its mode: leader,
// follower, standalone, or an error while it has no quorum) and `mntr`. These are
// the test's own questions, not operations of the system under test, so they are
// not recorded in the history. The servers allow them by `4lw.commands.whitelist`.
import { connect } from "node:net";

/** The server's answer to a four-letter word, or null when it does not answer in time. */
export function fourLetterWord(port: number, word: "srvr" | "mntr" | "ruok", timeoutMs = 1000, host = "127.0.0.1"): Promise<string | null> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const chunks: Buffer[] = [];
    const done = (answer: string | null): void => {
      clearTimeout(timer);
      socket.destroy();
      resolve(answer);
    };
    const timer = setTimeout(() => done(null), timeoutMs);
    socket.on("connect", () => socket.write(word));
    socket.on("data", (d) => chunks.push(d));
    // The server closes the connection once it has answered.
    socket.on("end", () => done(Buffer.concat(chunks).toString("utf8")));
    socket.on("error", () => done(null));
  });
}

export type ZkMode = "leader" | "follower" | "observer" | "standalone";

/**
 * The server's mode from `srvr`; null when it does not answer or serves no
 * requests ("This ZooKeeper instance is not currently serving requests": no quorum).
 */
export async function zkMode(port: number, timeoutMs = 1000): Promise<ZkMode | null> {
  const answer = await fourLetterWord(port, "srvr", timeoutMs);
  const m = answer?.match(/^Mode: (\w+)/m);
  return m ? (m[1] as ZkMode) : null;
}

/** `mntr` as a map of its keys (zk_server_state, zk_znode_count, ...); null when it does not answer. */
export async function zkMonitor(port: number, timeoutMs = 1000): Promise<Map<string, string> | null> {
  const answer = await fourLetterWord(port, "mntr", timeoutMs);
  if (!answer || !answer.startsWith("zk_")) return null;
  return new Map(answer.trim().split("\n").map((line) => line.split("\t", 2) as [string, string]));
}
