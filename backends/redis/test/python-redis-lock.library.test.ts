// Library tests (`npm run test:libraries`, not in `npm test`): whole runs of one
// library, what the libraries preset's soak runs too.
// python-redis-lock 4.0.1 from PyPI (its hashed requirements file, the venv
// fencecheck builds from its manifest's environment) by its adapter program,
// against a real redis-server under SIGSTOP pauses that outlast its 1 s expire:
// its renewal thread is frozen with the holder, so the key lapses and the next
// client takes it. With fences from a Redis counter the resource refuses the
// woken holder's write; without fencing it lands after the next holder's. Its
// renewal thread's death is told as a lost notice. Time budget: two runs of 10 s
// (about 26 s with their start and check), plus the environment's first build
// (about 10 s, once) where the suite's set-up has not made it.
import { referenceAdapterTests } from "../../../test/adapters/client-run.ts";

referenceAdapterTests({
  client: "python-redis-lock",
  options: ["--fence-source", "single", "--pause-min", "1500", "--pause-max", "2500"],
  fenceSource: "single",
  tells: true,
  faults: true,
  stale: true,
  library: "python-redis-lock 4.0.1 (redis-py 8.1.0)",
});
