// Library tests (`npm run test:libraries`, not in `npm test`): whole runs of one
// library, what the libraries preset's soak runs too.
// pottery 3.0.1's Redlock from PyPI (its hashed requirements file, the venv
// fencecheck builds from its manifest's environment) by its adapter program,
// over five real redis-servers, without faults: built at the pinned version,
// speaking the protocol, fenced from a Redis counter. Under SIGSTOP pauses that
// outlast auto_release_time a majority's keys lapse and the next client takes
// them: stale-write-accepted without fencing, refused with it; that is the
// libraries preset's finding (docs/locks.md, its pottery rows), not this file's.
import { referenceAdapterTests } from "../../../test/adapters/client-run.ts";

referenceAdapterTests({
  client: "pottery",
  options: ["--backend", "redlock", "--fence-source", "single"],
  fenceSource: "single",
  tells: false,
  faults: false,
  stale: false,
  library: "pottery 3.0.1 (redis-py 8.1.0)",
});
