// Browsing the run store on loopback (`npm run serve`): a list of runs with their
// verdicts, and each run's report, history, resource log, results, run.json and
// logs. Read-only, and nothing outside the store is ever served.
import { realpath, stat } from "node:fs/promises";
import type { AddressInfo } from "node:net";
import { BadInput } from "../lib/index.ts";
import { createServeServer } from "./server.ts";

export interface ServeOptions {
  /** The run store directory (histories/ by default). */
  store: string;
  /** 0 picks a free port. */
  port: number;
}

export interface ServeHandle {
  url: string;
  port: number;
  close(): Promise<void>;
}

export const SERVE_HOST = "127.0.0.1";

/** Throws BadInput when the store is not a directory or the port cannot be had. */
export async function startServe(opts: ServeOptions): Promise<ServeHandle> {
  let root: string;
  try {
    root = await realpath(opts.store);
  } catch {
    throw new BadInput(`--store ${opts.store} does not exist`);
  }
  if (!(await stat(root)).isDirectory()) throw new BadInput(`--store ${opts.store} is not a directory`);
  const server = createServeServer(root, opts.store);
  await new Promise<void>((resolve, reject) => {
    server.once("error", (e: NodeJS.ErrnoException) =>
      reject(e.code === "EADDRINUSE" || e.code === "EACCES" ? new BadInput(`--port ${opts.port}: cannot listen on ${SERVE_HOST}:${opts.port} (${e.code})`) : e),
    );
    server.listen(opts.port, SERVE_HOST, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://${SERVE_HOST}:${port}/`,
    port,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
