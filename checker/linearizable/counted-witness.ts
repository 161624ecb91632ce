// The witness of an rw lock's or a semaphore's model check (counted.ts): the
// operation the search could not get past, in the furthest order it found, and
// why the model refuses it there. The state there counts the holders, not who
// they are, so the holds named are those that certainly held the lock all through
// the operation's span: acquired before it was invoked, released only after it
// completed. Any one order may have others; these are in every one.
import type { Witness } from "../../store/events.ts";
import { ms, quoteAcquire, quoteOp } from "../explain.ts";
import { eventsOf, type Paired } from "../paired.ts";
import { OUTCOMES } from "../table.ts";
import type { CountedModel } from "./counted.ts";
import { ACQUIRE, NOT_RELEASED, RELEASE_OK, type MutexHistory } from "./fenced-mutex.ts";
import type { Deepest } from "./wgl.ts";
import { capital, leaseNote, releasesOf } from "./witness.ts";

/** Holds named at most as holding through a refused acquire. */
const MAX_NAMED = 3;

export function countedWitness(m: Paired, h: MutexHistory, model: CountedModel, deepest: Deepest): Witness {
  const o = m.ops;
  const rw = model.rw;
  const b = deepest.blocked;
  const s = deepest.state;
  const j = h.hold[b];
  const row = (i: number): number => h.row[i];
  const acquireRow = (x: number): number => m.holds.acquire[h.holds[x]];
  const mode = (x: number): string => (rw ? (model.reads(x) ? " for a read" : " for a write") : "");
  const holdText = (x: number): string => `${quoteAcquire(m, h.holds[x])}${mode(x)}`;
  const quote = (i: number): string => (h.kind[i] === ACQUIRE ? holdText(h.hold[i]) : quoteOp(m, row(i), `owner ${JSON.stringify(m.owners.names[m.holds.owner[h.holds[h.hold[i]]]])}`));
  const until = `by its ${OUTCOMES[o.outcome[row(b)]]} at ${ms(o.doneTime[row(b)])}`;
  const related: number[] = [row(b)];
  let why: string;
  if (deepest.taken < 0) {
    // certainlyRefused: no search; the holds that certainly held through its span are the reason.
    const read = !rw || model.reads(j);
    const through = holdersThrough(h, b).filter((x) => !rw || !read || !model.reads(x));
    const shown = through.slice(0, rw ? MAX_NAMED : model.permits);
    for (const x of shown) related.push(acquireRow(x), ...releasesOf(h, x).map(row));
    const who = shown.map((x) => heldText(m, h, x, holdText(x), o.doneTime[row(b)])).join("; ");
    const lock = rw ? "an rw lock" : `a semaphore of ${model.permits} permit${model.permits === 1 ? "" : "s"}`;
    return {
      key: h.key,
      events: eventsOf(m, ...related),
      explanation:
        `On key ${JSON.stringify(h.key)} no order of the acquires, renews and releases that respects real time is one ${lock} allows. ` +
        `${capital(quote(b))} must have taken effect ${until}, but in every such order ${through.length} hold${through.length === 1 ? "" : "s"} held the lock all through its span, ` +
        `acquired before it was invoked and released only after it completed: ${who}. ${ruleOf(rw, model.permits)}; a lease service does once leases run out, so only --model strict counts this.`,
    };
  }
  if (h.kind[b] === ACQUIRE) {
    const read = !rw || model.reads(j);
    const full = rw ? (read ? model.writer(s) : model.holders(s) > 0) : model.holders(s) >= model.permits;
    const fenced = model.fenced(s);
    if (full) {
      // Who certainly held through the acquire's span, of those that keep it out.
      const through = holdersThrough(h, b).filter((x) => !rw || !read || !model.reads(x)).slice(0, MAX_NAMED);
      for (const x of through) related.push(acquireRow(x), ...releasesOf(h, x).map(row));
      const state = rw ? (model.writer(s) ? "a writer held the lock" : `${model.holders(s)} reader${model.holders(s) === 1 ? "" : "s"} held the lock`)
        : `all ${model.permits} permits were held`;
      why = `${state}${through.length === 0 ? "" : `; among them, certainly, ${through.map((x) => heldText(m, h, x, holdText(x), o.doneTime[row(b)])).join("; ")}`}`;
    } else if (fenced >= 0 && !Number.isNaN(h.fences[j]) && !(h.fences[j] > h.fences[fenced])) {
      related.push(acquireRow(fenced));
      why = `its fence ${h.fences[j]} is not above fence ${h.fences[fenced]}, granted before it by ${holdText(fenced)}`;
    } else why = "every way on from that order had been searched already";
  } else if (h.kind[b] === NOT_RELEASED) {
    related.push(acquireRow(j));
    why = `it answered that the lock was no longer its hold's, yet nothing but that hold's own release can have freed its place (${holdText(j)})`;
  } else {
    related.push(acquireRow(j));
    why = "its hold no longer held the lock: an earlier release of it had freed its place";
  }
  const last = deepest.last;
  const context = last >= 0 && row(last) !== related[1] ? ` (the last operation to take effect before it was ${quoteOp(m, row(last))})` : "";
  if (last >= 0) related.push(row(last));
  const lock = rw ? "an rw lock" : `a semaphore of ${model.permits} permit${model.permits === 1 ? "" : "s"}`;
  const rule = ruleOf(rw, model.permits);
  return {
    key: h.key,
    events: eventsOf(m, ...related),
    explanation:
      `On key ${JSON.stringify(h.key)} no order of the acquires, renews and releases that respects real time is one ${lock} allows. ` +
      `${capital(quote(b))} must have taken effect ${until}, but in the furthest such order the search found, ` +
      `${deepest.taken} of ${h.length} operations in${context}, ${why}. ` +
      `${rule}; a lease service does once leases run out, so only --model strict counts this.`,
  };
}

const ruleOf = (rw: boolean, permits: number): string =>
  rw ? "An rw lock grants a read only while no writer holds it, and a write only while nobody holds it" : `A semaphore of ${permits} grants no permit while ${permits} are held`;

/** Holds other than b's whose acquire returned before b was invoked and none of whose releases was invoked before b returned. */
function holdersThrough(h: MutexHistory, b: number): number[] {
  // Each hold's first release call, in one pass: a key may have a hundred thousand holds.
  const firstRelease = new Float64Array(h.holds.length).fill(Infinity);
  for (let i = 0; i < h.length; i++) if ((h.kind[i] === RELEASE_OK || h.kind[i] === NOT_RELEASED) && h.call[i] < firstRelease[h.hold[i]]) firstRelease[h.hold[i]] = h.call[i];
  const out: number[] = [];
  for (let x = 0; x < h.holds.length; x++) {
    const a = h.acquireOf[x];
    if (x !== h.hold[b] && h.ret[a] >= 0 && h.ret[a] < h.call[b] && firstRelease[x] > h.ret[b]) out.push(x);
  }
  return out;
}

function heldText(m: Paired, h: MutexHistory, x: number, quoted: string, at: number): string {
  const o = m.ops;
  const rel = releasesOf(h, x);
  const ended = rel.length === 0 ? "which no release ended"
    : `whose release #${o.invoke[h.row[rel[0]]]} was invoked only at ${ms(o.start[h.row[rel[0]]])}${h.ret[rel[0]] < 0 ? " (its outcome unknown)" : ""}`;
  return `the hold of ${quoted}, ${ended}${leaseNote(m, h.holds[x], at)}`;
}
