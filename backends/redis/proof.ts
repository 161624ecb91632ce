// What a Redlock client may say about an attempt it did not take. The history's
// `fail` means "certainly did not happen"; a client that gave up may still have
// left its owner on some nodes (a timed-out SET can land later). It may say
// `fail` only if no majority can hold its owner, and must throw (an `info`)
// otherwise. A minority is harmless: a Redlock hold needs a majority.
import type { Call, CallKind } from "./nodes.ts";
import { count } from "./nodes.ts";
import { atLeast } from "../../clients/majority.ts";

/**
 * Certainly not holding our owner afterwards: every `kinds` call on the node was
 * refused, never left, or was followed by a release on the same connection that
 * was answered. Redis answers one connection's commands in order, so that release
 * ran after the call and removed whatever it had set. A library that retries by
 * itself (the sesame fork) makes several such calls per node in one attempt.
 */
async function clean(calls: readonly Call[], node: number, kinds: readonly CallKind[]): Promise<boolean> {
  const each = calls.map((a, i) => (a.node === node && kinds.includes(a.kind) ? undone(calls, i) : true));
  return (await Promise.all(each)).every(Boolean);
}

async function undone(calls: readonly Call[], i: number): Promise<boolean> {
  const a = calls[i];
  if (a.vote === "no" || a.vote === "unsent") return true;
  const r = calls.slice(i + 1).find((c) => c.node === a.node && c.kind === "release" && c.owner === a.owner);
  if (r && r.conn === a.conn) {
    const rv = await r.done;
    if (rv === "yes" || rv === "no") return true;
  }
  const av = await a.done;
  return av === "no" || av === "unsent";
}

/**
 * Whether a majority may still hold the owner that `kinds` calls (grant, or
 * extend) of this attempt set, after whatever releases followed them. Waits for
 * answers only as long as it takes to decide.
 */
export async function mayStillHold(calls: readonly Call[], size: number, quorum: number, kinds: readonly CallKind[]): Promise<boolean> {
  const checks = Array.from({ length: size }, (_, node) => clean(calls, node, kinds));
  return !(await atLeast(checks, size - quorum + 1));
}

/**
 * Why an attempt failed, from the answers in: `refused` (busy, not-owner) when a
 * majority said no. Each node's last call of `kind` speaks for it: the last round
 * of a library that retries by itself.
 */
export function failReason(calls: readonly Call[], quorum: number, kind: CallKind, refused: string): string {
  const last = new Map<number, Call>();
  for (const c of calls) if (c.kind === kind) last.set(c.node, c);
  const mine = [...last.values()];
  if (count(mine, "yes") >= quorum) return "expired";
  return count(mine, "no") >= quorum ? refused : "no-quorum";
}

/** The outcome is unknown: thrown so the workload records `info`. */
export class RedlockUnknown extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = "RedlockUnknown";
  }
}

/**
 * A release's outcome: released if any node deleted our key; not released if
 * none did and every node either answered or was never sent the call; unknown
 * if a node that did not answer may have deleted it.
 */
export async function releaseOutcome(calls: readonly Call[]): Promise<{ released: boolean }> {
  const mine = calls.filter((c) => c.kind === "release");
  if (mine.some((c) => c.vote === "yes")) return { released: true };
  const votes = await Promise.all(mine.map((c) => c.done));
  if (votes.includes("yes")) return { released: true };
  if (votes.includes("unknown")) throw new RedlockUnknown("timeout", `release: ${votes.filter((v) => v === "unknown").length} node(s) did not answer and none said it deleted the key`);
  return { released: false };
}
