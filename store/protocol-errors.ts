// protocol-errors.ndjson: each time an adapter program broke the protocol (a line
// that is no message, an unexpected exit, a wrong answer to init), one line
// (docs/history-format.md, "protocol-errors.ndjson"). The worker that ran the
// program tells the runner, which appends it as it writes the history.
//
// A file of its own rather than a line of the history: a stray line while no
// operation was outstanding ends no operation, so the history has no place for
// it, yet the run is not what it claims to be. The checkers count the lines:
// any makes the run UNKNOWN unless an anomaly makes it INVALID.
import { appendFileSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { RUN_FILES } from "./events.ts";

/** The errors that break the protocol. A timeout is not one: it is an ordinary info. */
export type ProtocolErrorCode = "adapter-bad-line" | "adapter-exited";

/** One line of protocol-errors.ndjson. */
export interface ProtocolError {
  /** Nanoseconds on the run's clock, as the history's `time`. */
  time: number;
  worker: string;
  /** The logical client whose program it was. */
  client: number;
  /** The client's process when it happened: the one whose operation it ended, if one was outstanding. */
  process: number;
  /** The program's pid. */
  pid: number;
  /** A ProtocolErrorCode as written; as read, whatever the line says ("?" for a line that cannot be read). */
  code: string;
  /** What the program did, in the words of the worker's log. */
  message: string;
}

const pathIn = (runDir: string): string => join(runDir, RUN_FILES.protocolErrors);

/** Appends one line with a synchronous write, as the history's lines are. */
export function appendProtocolError(runDir: string, e: ProtocolError): void {
  appendFileSync(pathIn(runDir), JSON.stringify(e) + "\n");
}

/**
 * The run's protocol errors: [] when the file is absent (no program broke the
 * protocol, or the run was not made by fencecheck). A last line cut short by a
 * kill still counts: it was an error. So does a line that is not a JSON object
 * with a string `code`, as code "?", with a warning: the file holds nothing else.
 */
export function readProtocolErrors(runDir: string, warnings: string[] = []): ProtocolError[] {
  let text: string;
  try {
    text = readFileSync(pathIn(runDir), "utf8");
  } catch {
    return [];
  }
  const out: ProtocolError[] = [];
  text.split("\n").forEach((line, i) => {
    if (line.trim() === "") return;
    try {
      const v: unknown = JSON.parse(line);
      if (typeof v === "object" && v !== null && !Array.isArray(v) && typeof (v as { code?: unknown }).code === "string") return void out.push(v as ProtocolError);
    } catch {
      // Below.
    }
    warnings.push(`${RUN_FILES.protocolErrors} line ${i + 1}: not a JSON object with a code (cut short by a kill?); counted as a protocol error`);
    out.push({ time: 0, worker: "?", client: -1, process: -1, pid: 0, code: "?", message: line });
  });
  return out;
}
