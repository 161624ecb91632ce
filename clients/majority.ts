// What a lock over several independent servers computes, whichever servers they
// are (Redlock over Redis nodes, the majority manager over our lock servers):
// the allowance for clock drift a hold's validity is cut by, and whether k of n
// servers said yes, decided as soon as the answers in allow.

/** Expiry precision (about 1 ms) plus 1% of the TTL for clock drift, as the Redis documentation and node-redlock have it. */
export const clockDrift = (ttlMs: number): number => 2 + 0.01 * ttlMs;

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
