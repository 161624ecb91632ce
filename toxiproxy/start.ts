// Running the built Toxiproxy on a port of our own on loopback, as a process of
// a process group: a run's (killed at its teardown, or by the reaper if the
// runner dies), the proxy benchmark's, or the conformance tests'.
import { waitForMembers, type ProcessGroup } from "../cluster/processes.ts";
import { SETUP_COMMAND, TOXIPROXY_VERSION, toxiproxyBinary, toxiproxyBuilt } from "./build.ts";

export interface RunningToxiproxy {
  /** http://127.0.0.1:<port>, what `new Toxiproxy(url)` wants. */
  url: string;
  /** What its GET /version said. */
  version: string;
}

export interface ToxiproxyStart {
  /** Never Toxiproxy's 8474: a Toxiproxy of the user's may be there. */
  port: number;
  /** Its log (JSON lines) goes here. */
  logFile: string;
  /** The group that owns the process: `group.kill("toxiproxy")` stops it. */
  group: ProcessGroup;
}

const NAME = "toxiproxy";

export async function startToxiproxy({ port, logFile, group }: ToxiproxyStart): Promise<RunningToxiproxy> {
  if (!toxiproxyBuilt()) throw new Error(`Toxiproxy v${TOXIPROXY_VERSION} is not built (${toxiproxyBinary()}): run ${SETUP_COMMAND}`);
  await group.spawn({ name: NAME, command: toxiproxyBinary(), args: ["-host", "127.0.0.1", "-port", String(port)], logFile });
  const url = `http://127.0.0.1:${port}`;
  let version = "unknown";
  // It says nothing on stdout when it listens: its API answering is the sign.
  const answers = async (): Promise<boolean> => {
    try {
      const res = await fetch(`${url}/version`, { signal: AbortSignal.timeout(1000) });
      if (res.ok) version = ((await res.json()) as { version?: string }).version ?? version;
      return res.ok;
    } catch {
      return false;
    }
  };
  try {
    await waitForMembers([NAME], `answering GET ${url}/version`, answers, { running: (n) => group.running(n), logFile: () => logFile, timeoutMs: 10_000, stepMs: 25 });
  } catch (err) {
    await group.kill(NAME);
    throw err;
  }
  return { url, version };
}
