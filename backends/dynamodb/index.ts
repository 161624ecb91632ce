// --backend dynamodb: one dynalite (DynamoDB's API on LevelDB) made for the run,
// or a DynamoDB of the user's, and the DynamoDB locks people use: one conditional
// write, AWS's DynamoDB Lock Client's algorithm, and the dynamodb-lock-client npm
// package. Its server is also a store the protected resource can decide in
// (--resource dynamodb).
import type { Backend, BackendOption, ClientKind } from "../../core/index.ts";
import { DYNALITE, DYNALITE_SERVER } from "./programs.ts";
import { D1, D2, D3 } from "./scenarios.ts";

const PERSISTENCE = {
  name: "dynamo-persistence",
  kind: "string",
  default: undefined,
  defaultText: "disk",
  choices: ["disk", "memory"],
  help: "--backend dynamodb: what a killed dynalite remembers: its tables on disk (LevelDB in the run directory), or nothing (memory: it comes back empty, the lock table is made again and the fences start over)",
} as const satisfies BackendOption;

const CLIENTS: Record<string, ClientKind> = {
  "dynamodb-cas": {
    describe: "one conditional UpdateItem grants: owner and lease end set if unheld or the lease (by the client's clock) is over, fence ADDed in the same write; renew and release conditional on the owner",
    load: async () => {
      const { DynamoCasLock } = await import("./cas.ts");
      return (ctx) => new DynamoCasLock(ctx);
    },
  },
  "dynamodb-rvn": {
    describe: "AWS's DynamoDB Lock Client's algorithm: heartbeats write a new record version number; a waiter takes over only after seeing the same one for a whole lease (no clock compared); fence ADDed with each grant",
    load: async () => {
      const { DynamoRvnLock } = await import("./rvn.ts");
      return (ctx) => new DynamoRvnLock(ctx);
    },
  },
  "dynamodb-lock-client": {
    package: "dynamodb-lock-client",
    describe: "npm dynamodb-lock-client 0.7.3 (FailOpen, v2 aws-sdk, retries off): waits a lease, then a put conditional on the guid it saw; heartbeats itself; fence = its fencingToken; a failed heartbeat is a suspended notice",
    notices: true,
    load: async () => {
      const { DynamoLockClientLibrary } = await import("./dynamodb-lock-client.ts");
      return (ctx) => new DynamoLockClientLibrary(ctx);
    },
  },
};

export const backend = {
  name: "dynamodb",
  describe: "one dynalite (DynamoDB's API on LevelDB) made for the run, or a DynamoDB of yours (--deploy external); the lock table fencecheck_locks (on yours, one of the run's own), an item per lock key",
  clients: CLIENTS,
  defaultClient: "dynamodb-cas",
  abilities: ["kill"],
  lacks: {
    clock: "dynalite keeps no time for the locks (no TTL, no server-side lease): the leases are judged by the clients' clocks (dynamodb-cas) or by none (dynamodb-rvn, dynamodb-lock-client), so moving the server's clock would change nothing it decides",
  },
  cannot: {
    docker: "its servers run as local processes or a service of yours (--deploy external) only: dynalite is an npm package a run starts with Node, and there is no container image of it",
  },
  start: async (ctx) => (await import("./start.ts")).startDynamoBackend(ctx, (ctx.options[PERSISTENCE.name] ?? "disk") === "disk"),
  // A DynamoDB of the user's: its account from the AWS environment, the locks in a table of the run's.
  external: {
    serversFrom: "the AWS environment: AWS_ENDPOINT_URL_DYNAMODB, AWS_ENDPOINT_URL, or the region's own endpoint",
    check: async (test, warn) => (await import("./external.ts")).checkDynamoService(test, warn),
    open: async (ctx) => (await import("./external.ts")).openDynamoService(ctx),
  },
  programs: [DYNALITE_SERVER],
  serverNames: ["dynamodb-1"],
  removeKeys: async (nodes, prefix) => (await import("./start.ts")).removeDynamoKeys(nodes, prefix),
  options: [PERSISTENCE],
  rules: [
    {
      name: "persistence of a DynamoDB of yours",
      check: ({ options, deploy }) =>
        options[PERSISTENCE.name] !== undefined && deploy === "external" ? `--dynamo-persistence says what the run's own dynalite keeps; with --deploy external the DynamoDB is yours` : undefined,
    },
  ],
  needs: { servers: DYNALITE },
  // dynalite is an npm package the run starts with Node: its version is a package's.
  packages: ["@aws-sdk/client-dynamodb", "dynamodb-lock-client", "aws-sdk", "dynalite"],
  serverVersion: "dynalite",
  // The resource's dynalite keeps its LevelDB in the run directory: what it committed outlives the run.
  resourceStore: {
    describe: "a dynalite of its own (one conditional UpdateItem per write)",
    start: async ({ group, ports, runDir }) => {
      const { node } = await (await import("./server.ts")).startDynalite(group, ports, { runDir, name: "resource-db", persistent: true });
      return { node, config: { host: node.host, port: node.port } };
    },
    decider: "backends/dynamodb/decider",
    needs: DYNALITE,
  },
  scenarios: [D1, D2, D3],
} as const satisfies Backend;
