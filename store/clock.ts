// The run's clock. docs/history-format.md wants every process of a run (runner,
// workers, the resource) to stamp events on one monotonic clock. process.hrtime is
// CLOCK_MONOTONIC, which is system-wide on Linux, so each process computes "now -
// t0" from the same t0 handed down by the runner, and the stamps compare across
// processes. Wall clocks would not do: the clock nemesis moves them.

export const T0_ENV = "FENCECHECK_T0";

export type RunClock = () => number;

/** The start of a new run, to hand to child processes as a decimal string. */
export function newRunStart(): bigint {
  return process.hrtime.bigint();
}

/** A clock reading nanoseconds since `t0` (a number is exact for 104 days). */
export function runClock(t0: bigint): RunClock {
  return () => Number(process.hrtime.bigint() - t0);
}

/** The clock of a child process, from the runner's t0 in its environment. */
export function runClockFromEnv(env: NodeJS.ProcessEnv = process.env): RunClock {
  const raw = env[T0_ENV];
  if (!raw || !/^\d+$/.test(raw)) throw new Error(`${T0_ENV} must be set to the run's start in ns, got ${JSON.stringify(raw)}`);
  return runClock(BigInt(raw));
}
