// What the page draws of format 2's lock kinds beyond the mutex: which kind the
// header names (a mutex's run, and a format 1 one, draw exactly as before), each
// rw hold's mode, and which failed acquires were waits the client withdrew.
import { CANCEL_UNKNOWN_ERROR, CANCELLED_ERROR, type HistoryHeader } from "../store/events.ts";
import type { Hold, Op } from "./ops.ts";

export interface LockView {
  lock: "reentrant" | "rw" | "semaphore";
  /** A semaphore's permits (1 for the others). */
  permits: number;
}

/** The lock kind of a format 2 header, or null for a mutex's run. */
export function lockOf(header: HistoryHeader): LockView | null {
  if (header.format !== 2) return null;
  const lock = header.lock;
  if (lock !== "reentrant" && lock !== "rw" && lock !== "semaphore") return null;
  const permits = lock === "semaphore" && typeof header.permits === "number" && header.permits >= 1 ? header.permits : 1;
  return { lock, permits };
}

/** Sets each rw hold's mode from its acquire (the invoke asks, the ok may repeat it). */
export function markModes(holds: readonly Hold[]): void {
  for (const h of holds) {
    const mode = h.acquire.completion?.value?.mode ?? h.acquire.invoke.value?.mode;
    if (mode === "read" || mode === "write") h.mode = mode;
  }
}

/** "cancelled": the client withdrew its wait and the service certainly removed it; "unknown": withdrawn, removal unknown. */
export function cancelOf(op: Op): "cancelled" | "unknown" | null {
  if (op.f !== "acquire") return null;
  const error = op.completion?.error;
  if (op.outcome === "fail" && error === CANCELLED_ERROR) return "cancelled";
  if (op.outcome === "info" && error === CANCEL_UNKNOWN_ERROR) return "unknown";
  return null;
}
