import { defineConfig } from "vitest/config";
import LongestFirst from "./test/sequencer.ts";

/**
 * What the package gives a team: its types (test/typecheck.test.ts: tsc finds no
 * error in the sources, and the API's TestOptions, as published, follows the
 * options' declarations), and the packed tarball installed in a team's project
 * outside the checkout (test/package/team.ts), where the docs' worked examples and
 * the GitHub Action's commands run as written, three npm installs and a dozen whole
 * runs: `npm run test:package`. The type check was npm test's costliest file
 * (docs/measurements.md, "The test suite's CPU, file by file").
 */
export const PACKAGE_TESTS = ["test/typecheck.test.ts", "test/package/outside.test.ts", "test/package/own-lock.test.ts", "test/package/action.test.ts"];

/**
 * The tests that start lock adapter programs (test/adapters/): the protocol's
 * programs through the Node bridge and misbehaving ones, environments built from
 * lock files, and the reference adapters in Python, Java and Go driven hold by
 * hold and in whole runs: `npm run test:adapters`. The protocol's messages and
 * ProgramClient's pure logic stay in `npm test`.
 */
export const ADAPTER_TESTS = [
  "test/adapters/program.test.ts",
  "test/adapters/environment.test.ts",
  "test/adapters/reference.test.ts",
  "test/adapters/kinds.test.ts",
  "test/adapters/shedlock.test.ts",
  "test/adapters/redisson-kinds.test.ts",
  "test/adapters/outside.test.ts",
];

/**
 * Whole runs with --deploy docker on a real container engine: servers in
 * containers paused, killed and cut off the run's network, a runner killed
 * outright leaving no container behind: `npm run test:docker`. A container
 * deployment's parts against the engine (test/docker/deployment.test.ts: a
 * server published on 127.0.0.1, paused, killed and restarted on its data, its
 * clock moved, torn down) and its pure logic stay in `npm test`.
 */
export const DOCKER_TESTS = ["test/docker/runs.test.ts", "test/docker/zookeeper-postgres.test.ts", "backends/mariadb/test/docker.test.ts"];

/**
 * The lab's experiments run whole as a user runs them (`npm run experiment --
 * NAME --quick`), each stored with its figures and plot: `npm run
 * test:experiments`. The experiment command's options (test/experiments/cli.test.ts)
 * and the experiments' pure logic stay in `npm test`.
 */
export const EXPERIMENT_TESTS = ["contention", "dead-session", "fairness", "fence-counters", "keys", "renew", "ttl-liveness"].map((name) => `test/experiments/${name}.test.ts`);

/**
 * Whole runs with --deploy external against clusters started apart from the run,
 * as a team's own (their keys swept, a SIGKILLed runner's leftovers, a real
 * Toxiproxy in front): `npm run test:external`. The options that --deploy
 * external refuses stay in `npm test`.
 */
export const EXTERNAL_TESTS = [
  "test/cluster/external.test.ts",
  "test/cluster/external-toxiproxy.test.ts",
  "backends/zookeeper/test/external.test.ts",
  "backends/postgres/test/external.test.ts",
  "backends/mariadb/test/external.test.ts",
  "backends/dynamodb/test/external-service.test.ts",
];

/** The library tests: whole runs of one library each, what the libraries preset's soak runs too (`npm run test:libraries`). */
export const LIBRARY_TESTS = ["test/**/*.library.test.ts", "backends/*/test/*.library.test.ts"];

/**
 * The tiers kept out of `npm test`, each run by `npm run test:NAME` with its
 * config vitest.NAME.config.ts (tierConfig below); test/tiers.test.ts holds the
 * scripts, the config files, .ci/run and the README to this table.
 */
export const TIERS = {
  adapters: ADAPTER_TESTS,
  docker: DOCKER_TESTS,
  external: EXTERNAL_TESTS,
  experiments: EXPERIMENT_TESTS,
  package: PACKAGE_TESTS,
  libraries: LIBRARY_TESTS,
} as const;
export type Tier = keyof typeof TIERS;

const suite = defineConfig({
  test: {
    include: ["test/**/*.test.ts", "backends/*/test/*.test.ts"],
    // Every tier's files (TIERS above, each described where it is listed) are
    // left out: the library tests because the libraries preset's soak runs them
    // too, the others because they did not fit `npm test`'s 10 minutes on two
    // cores, measured file by file (docs/measurements.md, "The test suite's CPU,
    // file by file"). `npm test` keeps a whole run of every backend, Hazelcast's
    // with its Java client program among them; test:adapters keeps one reference
    // adapter run per language (kazoo, etcd's Go Mutex, Redisson's RFencedLock).
    exclude: ["**/node_modules/**", ...Object.values(TIERS).flat()],
    globalSetup: ["test/build-once.ts"],
    // Each file's temporary run directories removed when it is done (test/cleanup.ts).
    setupFiles: ["test/cleanup.ts"],
    // The runs a test starts in-process start their workers, resource and proxy
    // from dist/ (lib/paths.ts), as a user's run does: no TypeScript compiled at
    // each child's start, which on two cores was minutes of the suite.
    env: { FENCECHECK_ENTRIES: "dist" },
    // Four files at a time. The suite is bound by CPU on two cores: its runs
    // (about 330) cost 1 to 2 CPU-s each to start and stop five node processes,
    // and vitest's fork about 0.6 CPU-s per file. At three files, 20 to 24% of
    // the CPU stood idle (files waiting on their runs' time limits) and vitest
    // took 702 s here, 722 to 845 s from fresh clones; at four, with the polling clients'
    // retry at 10-30 ms instead of 2-10 (140 CPU-s less, docs/measurements.md
    // "Waiters' retry"), 576 s, 13% idle, every test passing (2026-11-30). At
    // five (before that change), 570 to 776 s with a timing failure in most
    // runs: a Python or JVM client starting late, a ZooKeeper session or a
    // dynalite socket lost to a stall.
    pool: "forks",
    // Longest files first, on a fresh clone too (test/sequencer.ts says why).
    sequence: { sequencer: LongestFirst },
    maxWorkers: 4,
    minWorkers: 1,
    testTimeout: 120_000,
    hookTimeout: 60_000,
  },
});
export default suite;

/** A tier's config: its files only, with the suite's set-up, order and timeouts. */
export function tierConfig(tier: Tier) {
  return defineConfig({ ...suite, test: { ...suite.test, include: [...TIERS[tier]], exclude: ["**/node_modules/**"] } });
}
