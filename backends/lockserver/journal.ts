// --persistence always: every change of state appended to data/journal.ndjson
// and fsynced before its answer leaves, and replayed at start. Nothing else is
// kept: waiters die with their connections, which a restart closes anyway.
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import type { Change } from "./state.ts";

export class Journal {
  private readonly fd: number;
  readonly file: string;

  constructor(dataDir: string) {
    mkdirSync(dataDir, { recursive: true });
    this.file = join(dataDir, "journal.ndjson");
    this.fd = openSync(this.file, "a");
  }

  /** The changes written so far; a last line cut short by a kill mid-write was never answered, and is skipped. */
  static read(dataDir: string): Change[] {
    const file = join(dataDir, "journal.ndjson");
    if (!existsSync(file)) return [];
    const changes: Change[] = [];
    for (const line of readFileSync(file, "utf8").split("\n")) {
      if (line === "") continue;
      try {
        changes.push(JSON.parse(line) as Change);
      } catch {
        break;
      }
    }
    return changes;
  }

  append(c: Change): void {
    writeSync(this.fd, JSON.stringify(c) + "\n");
    fsyncSync(this.fd);
  }

  close(): void {
    closeSync(this.fd);
  }
}
