// Fault windows (checker/fault-windows.ts pairs the nemesis events into them, for
// the witnesses and for the page alike), and why each fault landed where it did.
export { faultKind, faultWindows, type FaultWindow } from "../checker/index.ts";

/**
 * One sentence on why a fault landed where it did, from the aim its start event
 * records (nemesis/aim.ts); null for a run that recorded none (a script's fault,
 * or a run from before faults were aimed).
 */
export function aimSentence(v: unknown): string | null {
  if (typeof v !== "object" || v === null) return null;
  const value = v as Record<string, unknown>;
  const aim = value.aim;
  if (typeof value.why === "string") return value.why;
  if (aim === "random") {
    if (value.held === undefined) return "at random (--aim random)";
    return value.held === 0 ? "nothing was held, so anywhere" : "every holder was already under a fault, so anywhere";
  }
  if (aim !== "holder") return null;
  const holder = typeof value.holder === "string" ? value.holder : "a holder";
  const granted = Array.isArray(value.granted) ? (value.granted as string[]) : null;
  if (value.exiled === false) return `${holder} held a lock, but this grudge could not leave it without the lock service`;
  if (value.exiled === true) return `${holder} held a lock: cut off from a majority while another worker keeps one`;
  return granted ? `${holder} held a lock granted by ${granted.join(", ")}` : `${holder} held a lock`;
}
