// pottery 3.0.1's Redlock from PyPI (its hashed requirements file, the venv
// fencecheck builds from its manifest's environment) by its adapter program,
// over five real redis-servers under SIGSTOP pauses that outlast
// auto_release_time (the 1 s TTL): a majority's keys lapse while the holder is
// frozen and the next client takes them. With fences from a Redis counter the
// resource refuses the woken holder's write; without fencing it lands after the
// next holder's. pottery cannot tell its holder of a lost lock but by extend()
// and release() failing. Time budget: two runs of 10 s (about 26 s with their
// start and check), plus the environment's first build (about 10 s, once) where
// the suite's set-up has not made it.
import { referenceAdapterTests } from "../../../test/adapters/client-run.ts";

referenceAdapterTests({
  client: "pottery",
  options: ["--backend", "redlock", "--fence-source", "single", "--pause-min", "1500", "--pause-max", "2500"],
  fenceSource: "single",
  tells: false,
  stale: true,
  library: "pottery 3.0.1 (redis-py 8.1.0)",
});
