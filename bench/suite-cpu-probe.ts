// bench:suite-cpu's setup file: one line per test file as its fork starts and
// ends it (the fork's pid and the file), appended to the bench's log; the
// end's line has the fork's own CPU so far, which the bench's samples of /proc
// would miss for a fork that lives less than one interval.
import { afterAll, beforeAll, expect } from "vitest";
import { appendFileSync } from "node:fs";

const mark = (ev: "start" | "end"): void => {
  const cpu = process.cpuUsage();
  const line = { pid: process.pid, ev, file: expect.getState().testPath, ...(ev === "end" ? { cpu_ms: (cpu.user + cpu.system) / 1000 } : {}) };
  appendFileSync(process.env.FENCECHECK_SUITE_CPU_LOG!, JSON.stringify(line) + "\n");
};

beforeAll(() => mark("start"));
afterAll(() => mark("end"));
