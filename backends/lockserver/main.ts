// A lock server of the seed's design, as a process of its own: a system under
// test (--backend lockserver), started by the run like its Redis or dynalite.
//
//   node backends/lockserver/main.js --port N --data DIR [--persistence none|always]
//
// --persistence always (the default) appends each change to DIR/journal.ndjson,
// fsynced before the answer, and replays it at start; none keeps everything in
// memory, so a restart forgets its holders and its fence counters alike.
// Exits on SIGTERM, SIGINT or SIGHUP, and when its parent dies.
import { parseArgs } from "node:util";
import { EXIT } from "../../lib/exit.ts";
import { onParentGone } from "../../lib/lifeline.ts";
import { Journal } from "./journal.ts";
import { createLockServer } from "./server.ts";

function fail(message: string, code: number): never {
  process.stderr.write(`lockserver: ${message}\n`);
  process.exit(code);
}

function main(): void {
  let values;
  try {
    ({ values } = parseArgs({ options: { port: { type: "string" }, data: { type: "string" }, persistence: { type: "string", default: "always" } }, strict: true }));
  } catch (e) {
    return fail((e as Error).message, EXIT.badInput);
  }
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) fail(`--port must be a port number, got ${JSON.stringify(values.port)}`, EXIT.badInput);
  if (values.persistence !== "none" && values.persistence !== "always") fail(`--persistence must be none or always, got ${JSON.stringify(values.persistence)}`, EXIT.badInput);
  if (values.persistence === "always" && !values.data) fail("--persistence always needs --data DIR", EXIT.badInput);
  const journal = values.persistence === "always" ? new Journal(values.data!) : null;
  const replay = journal ? Journal.read(values.data!) : [];
  const { server } = createLockServer({ record: journal ? (c) => journal.append(c) : undefined, replay });

  const stop = (why: string): void => {
    process.stderr.write(`lockserver: stopping (${why})\n`);
    server.close();
    journal?.close();
    process.exit(0);
  };
  for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"] as const) process.on(signal, () => stop(signal));
  onParentGone({ watchStdin: false }, stop);
  server.on("error", (e) => fail(e.message, EXIT.crash));
  server.listen(port, "127.0.0.1", () => {
    const address = server.address();
    const bound = typeof address === "object" && address ? address.port : port;
    process.stdout.write(JSON.stringify({ port: bound }) + "\n");
    process.stderr.write(`lockserver: listening on 127.0.0.1:${bound}, persistence ${values.persistence}, ${replay.length} changes replayed\n`);
  });
}

main();
