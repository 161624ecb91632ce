// The dynamodb backend's options: refused with a message naming what is wrong,
// exit 254, and no run directory made.
import { describe } from "vitest";
import { refusesEach } from "../../../test/helpers.ts";

describe("test:jepsen options of the dynamodb backend", () => {
  const bad: Array<[string[], RegExp]> = [
    [["--backend", "dynamodb", "--nemesis", "clock"], /--nemesis clock does not work with --backend dynamodb: dynalite keeps no time for the locks/],
    [["--backend", "dynamodb", "--client", "redis"], /--client redis does not work with --backend dynamodb; choose from dynamodb-cas, dynamodb-rvn, dynamodb-lock-client/],
    [["--client", "dynamodb-rvn"], /--client dynamodb-rvn does not work with --backend redis/],
    [["--backend", "dynamodb", "--deploy", "docker"], /--deploy docker does not work with --backend dynamodb: its servers run as local processes or a service of yours \(--deploy external\) only: dynalite is an npm package a run starts with Node, and there is no container image of it$/m],
    [["--backend", "dynamodb", "--deploy", "external", "--nemesis", "kill"], /--nemesis kill needs a "kill" control command for every server, and dynamodb-1 has none/],
    [["--backend", "dynamodb", "--deploy", "external", "--nemesis", "pause-server"], /--nemesis pause-server needs a "pause" control command for every server, and dynamodb-1 has none/],
    [["--backend", "dynamodb", "--deploy", "external", "--dynamo-persistence", "memory"], /--dynamo-persistence says what the run's own dynalite keeps; with --deploy external the DynamoDB is yours/],
    [["--dynamo-persistence", "memory"], /--dynamo-persistence applies to --backend dynamodb only, not redis/],
    [["--backend", "dynamodb", "--dynamo-persistence", "tape"], /--dynamo-persistence: unknown value "tape"/],
  ];
  refusesEach("test", bad);
});
