// The dynamodb backend's start: the run's dynalite (backends/dynamodb/server.ts), and the
// lock table its clients keep their items in, made again whenever the server
// comes back from a kill without it (--dynamo-persistence memory).
import { DeleteItemCommand, ScanCommand, type AttributeValue } from "@aws-sdk/client-dynamodb";
import { startDynalite, type DynaliteCluster } from "./server.ts";
import type { ServerNode } from "../../cluster/cluster.ts";
import { dynamoClient, ensureLockTable, lockTableName, LOCK_KEY } from "./connection.ts";
import type { BackendContext } from "../../core/index.ts";

const ADMIN_TIMEOUT_MS = 10_000;

/** Run `f` with an SDK client on the server directly (not through a worker's proxy). */
async function onServer<T>(node: ServerNode, f: (c: ReturnType<typeof dynamoClient>) => Promise<T>): Promise<T> {
  const client = dynamoClient(node, ADMIN_TIMEOUT_MS);
  try {
    return await f(client);
  } finally {
    client.destroy();
  }
}

export function startDynamoBackend(ctx: BackendContext, persistent: boolean): Promise<DynaliteCluster> {
  return startDynalite(ctx.group, ctx.ports, {
    runDir: ctx.runDir,
    name: "dynamodb-1",
    persistent,
    deployment: ctx.deployment,
    // After every start: on disk the table is there again after a kill; in
    // memory the server came back with nothing, and the locks start over (their
    // fences too, from 1: what a lock service that forgets does to fencing).
    prepare: (node) => onServer(node, (c) => ensureLockTable(c)),
  });
}

/** The run's lock items, on a DynamoDB it shares: their keys all start with `prefix`. */
export async function removeDynamoKeys(nodes: readonly ServerNode[], prefix: string): Promise<number> {
  if (prefix === "") throw new Error("refusing to delete every lock item: the run has no key prefix");
  const table = lockTableName();
  return onServer(nodes[0], async (c) => {
    let deleted = 0;
    let from: Record<string, AttributeValue> | undefined;
    do {
      const page = await c.send(
        new ScanCommand({
          TableName: table,
          ProjectionExpression: "#k",
          FilterExpression: "begins_with(#k, :prefix)",
          ExpressionAttributeNames: { "#k": LOCK_KEY },
          ExpressionAttributeValues: { ":prefix": { S: prefix } },
          ExclusiveStartKey: from,
        }),
      );
      for (const item of page.Items ?? []) {
        await c.send(new DeleteItemCommand({ TableName: table, Key: { [LOCK_KEY]: item[LOCK_KEY] } }));
        deleted++;
      }
      from = page.LastEvaluatedKey;
    } while (from);
    return deleted;
  });
}
