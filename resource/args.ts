// The resource process's command line. Bad arguments are the user's mistake, so
// they come back as BadInput (exit 254) with a message naming the argument.
import { parseArgs } from "node:util";
import { BadInput } from "../lib/index.ts";

export interface ResourceArgs {
  /** 0 picks a free port. */
  port: number;
  /** resource.ndjson, appended to. */
  log: string;
  fencing: boolean;
  fenceReads: boolean;
  /** Exit when stdin closes: the parent holds the other end and dies with it. */
  watchStdin: boolean;
}

export const USAGE =
  "usage: resource/main.ts --log <resource.ndjson> --fence on|off [--port N] [--fence-reads] [--watch-stdin]";

export function parseResourceArgs(argv: string[]): ResourceArgs {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        port: { type: "string", default: "0" },
        log: { type: "string" },
        fence: { type: "string" },
        "fence-reads": { type: "boolean", default: false },
        "watch-stdin": { type: "boolean", default: false },
      },
    }));
  } catch (e) {
    throw new BadInput(`${(e as Error).message}\n${USAGE}`);
  }
  const port = Number(values.port);
  if (!/^\d+$/.test(values.port ?? "") || port > 65535) throw new BadInput(`--port must be 0..65535, got ${JSON.stringify(values.port)}`);
  if (!values.log) throw new BadInput(`--log is required\n${USAGE}`);
  if (values.fence !== "on" && values.fence !== "off") throw new BadInput(`--fence must be on or off, got ${JSON.stringify(values.fence)}`);
  return {
    port,
    log: values.log,
    fencing: values.fence === "on",
    fenceReads: values["fence-reads"] ?? false,
    watchStdin: values["watch-stdin"] ?? false,
  };
}
