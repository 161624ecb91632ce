// protocol-errors.ndjson: each time an adapter program broke the protocol (a line
// that is no message, an unexpected exit, a wrong answer to init), one line,
// appended by the worker that ran it the moment it happened
// (docs/history-format.md, "protocol-errors.ndjson").
//
// A file of its own rather than a line of the history: a stray line while no
// operation was outstanding ends no operation, so the history has no place for
// it, yet the run is not what it claims to be; and the worker writes it itself,
// with a synchronous append, so a run whose runner is killed keeps every error
// recorded before the kill. The checker counts the lines: any makes the run
// UNKNOWN unless an anomaly makes it INVALID.
import { appendFileSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { RUN_FILES } from "./events.ts";

/** The errors that break the protocol. A timeout is not one: it is an ordinary info. */
export const PROTOCOL_ERROR_CODES = ["adapter-bad-line", "adapter-exited"] as const;
export type ProtocolErrorCode = (typeof PROTOCOL_ERROR_CODES)[number];

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
  /** One of PROTOCOL_ERROR_CODES as the worker writes it; as read, whatever the line says ("?" for a line that cannot be read). */
  code: string;
  /** What the program did, in the words of the worker's log. */
  message: string;
}

export const protocolErrorsPath = (runDir: string): string => join(runDir, RUN_FILES.protocolErrors);

/** Appends one line with a synchronous write: it is with the kernel before the program's next operation starts. */
export function appendProtocolError(runDir: string, e: ProtocolError & { code: ProtocolErrorCode }): void {
  appendFileSync(protocolErrorsPath(runDir), JSON.stringify(e) + "\n");
}

/**
 * The run's protocol errors: [] when the file is absent (no program broke the
 * protocol, or the run was not made by fencecheck). A last line cut short by a
 * kill still counts: it was an error. A line that is not a JSON object counts
 * too, with a warning, since the file holds nothing else.
 */
export function readProtocolErrors(runDir: string, warnings: string[] = []): ProtocolError[] {
  let text: string;
  try {
    text = readFileSync(protocolErrorsPath(runDir), "utf8");
  } catch {
    return [];
  }
  const out: ProtocolError[] = [];
  text.split("\n").forEach((line, i) => {
    if (line.trim() === "") return;
    try {
      const v: unknown = JSON.parse(line);
      if (typeof v === "object" && v !== null && !Array.isArray(v)) return void out.push(v as ProtocolError);
    } catch {
      // Below.
    }
    warnings.push(`${RUN_FILES.protocolErrors} line ${i + 1}: not a JSON object (cut short by a kill?); counted as a protocol error`);
    out.push({ time: 0, worker: "?", client: -1, process: -1, pid: 0, code: "?", message: line });
  });
  return out;
}

/**
 * The unknown reason a run with protocol errors gets: how many, of which codes,
 * and why that leaves the run unproved. Both checkers give it (the reference's
 * words are its own, the count the same).
 */
export function protocolErrorsReason(errors: readonly Pick<ProtocolError, "code">[]): string {
  const by = new Map<string, number>();
  for (const e of errors) by.set(e.code, (by.get(e.code) ?? 0) + 1);
  const codes = [...by].map(([code, n]) => `${code} ×${n}`).join(", ");
  return `the adapter program broke the protocol ${errors.length} time${errors.length === 1 ? "" : "s"} (${codes}; each a line of ${RUN_FILES.protocolErrors}): what it did around them may be missing from the history, so it cannot show the lock was correct`;
}
