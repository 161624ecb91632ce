// Whether a resource's log (resource.ndjson) and the table of the store it
// decides in (--resource postgres, dynamodb) tell the same story after the store
// was lost mid-commit. The log holds committed decisions only (committed.ts):
// a line with a place (`order`) is one the store counted, a line of unknown
// outcome (`accepted: null`, no place) one that may or may not have taken
// effect. So, key by key, the store's count of decisions lies between the lines
// with a place and those plus the unknown ones, no place is given twice or lies
// past that count, and the row holds the last accepted write's value (and, with
// fencing, its fence) or that of a write of unknown outcome that came after it.
// A read whose reply was lost is counted by the store and logged nowhere, so
// this holds for runs whose reads all answered (a mutex's fenced writes have none).
import { isDeepStrictEqual } from "node:util";
import type { ResourceDecision } from "../store/events.ts";

/** A key's row in the store: its value, its highest fence, and how many decisions the store counted. */
export interface StoreRow {
  value: unknown;
  fence: number | null;
  decisions: number;
}

const placed = (l: ResourceDecision): boolean => l.order !== null && l.order !== undefined;

/** One sentence per disagreement, naming the key; none when the log and the table agree. */
export function logTableDisagreements(lines: readonly ResourceDecision[], table: ReadonlyMap<string, StoreRow>): string[] {
  const found: string[] = [];
  const keys = [...new Set([...lines.map((l) => l.key), ...table.keys()])].sort();
  for (const key of keys) {
    const say = (what: string): void => void found.push(`key ${key}: ${what}`);
    const mine = lines.filter((l) => l.key === key);
    const known = mine.filter(placed);
    const unknown = mine.filter((l) => l.accepted === null);
    const row = table.get(key) ?? { value: null, fence: null, decisions: 0 };
    const decidedUnplaced = mine.filter((l) => !placed(l) && l.accepted !== null);
    if (decidedUnplaced.length) say(`${decidedUnplaced.length} line(s) decided (accepted or refused) but without a place, e.g. seq ${decidedUnplaced[0].seq}`);
    const places = known.map((l) => l.order!);
    const twice = places.filter((p, i) => places.indexOf(p) !== i);
    if (twice.length) say(`place(s) ${[...new Set(twice)].join(", ")} given to more than one line`);
    const highest = Math.max(0, ...places);
    if (highest > row.decisions) say(`a line has place ${highest} but the table counts ${row.decisions} decision(s)`);
    const extra = row.decisions - known.length;
    if (extra < 0) say(`the table counts ${row.decisions} decision(s), fewer than the ${known.length} line(s) with a place`);
    if (extra > unknown.length) say(`the table counts ${row.decisions} decision(s): ${known.length} line(s) with a place and only ${unknown.length} of unknown outcome to make up the rest`);
    const last = known.filter((l) => l.op === "write" && l.accepted === true).sort((a, b) => a.order! - b.order!).at(-1);
    // Unknown writes may have taken effect after `last` only if the store counted decisions past it.
    const maybe = row.decisions > (last?.order ?? 0) ? unknown.filter((l) => l.op === "write") : [];
    const candidates = [...(last ? [last] : []), ...maybe].map((l) => ({ value: l.data, fence: l.fence, fencing: l.fencing }));
    if (!last) candidates.push({ value: null, fence: null, fencing: mine[0]?.fencing ?? true });
    const matches = candidates.some((c) => isDeepStrictEqual(c.value, row.value) && (!c.fencing || c.fence === row.fence));
    if (!matches)
      say(
        `the table holds value ${JSON.stringify(row.value)} with fence ${row.fence}, which is ${last ? `neither the last accepted write's (seq ${last.seq}, fence ${last.fence})` : "not the empty row"}` +
          ` nor that of one of ${maybe.length} write(s) of unknown outcome after it`,
      );
  }
  return found;
}
