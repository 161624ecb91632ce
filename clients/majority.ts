// What a lock over several independent servers computes, whichever servers they
// are (Redlock over Redis nodes, the majority manager over our lock servers):
// the allowance for clock drift a hold's validity is cut by, and whether k of n
// servers said yes, decided as soon as the answers in allow.

/** Expiry precision (about 1 ms) plus 1% of the TTL for clock drift, as the Redis documentation and node-redlock have it. */
export const clockDrift = (ttlMs: number): number => 2 + 0.01 * ttlMs;

/**
 * What is left of a lease granted `elapsedMs` ago, less the drift allowance, in
 * whole ms: the figure an acquire decides on and reports as `validity_ms`. A
 * lock is handed over only when it is above 0. Deciding on the fraction and
 * reporting it rounded down handed over holds with 0.4 ms left reported as 0,
 * which the checker rightly calls expired-on-arrival (one ten-second
 * lockserver-majority run in 8 on 2026-11-30).
 */
export const validityLeft = (ttlMs: number, elapsedMs: number): number => Math.floor(ttlMs - elapsedMs - clockDrift(ttlMs));

/** True as soon as `k` of the promises gave true; false as soon as that cannot happen. */
export function atLeast(checks: Array<Promise<boolean>>, k: number): Promise<boolean> {
  if (k <= 0) return Promise.resolve(true);
  return new Promise((resolve) => {
    let yes = 0;
    let left = checks.length;
    for (const p of checks)
      void p.then((ok) => {
        left--;
        if (ok) yes++;
        if (yes >= k) resolve(true);
        else if (yes + left < k) resolve(false);
      });
  });
}
