// --backend dynamodb --deploy external: a run on a DynamoDB of the user's (an
// AWS account, DynamoDB Local, LocalStack). The run keeps its locks in a table
// of its own, lockTableName(<key prefix>), made at the start and deleted by the
// process group's teardown, so also when the run fails or is interrupted; it
// touches nothing else in the account. Before anything starts, preflight does
// once, on a probe table of its own, everything the run will do, so that a
// missing permission is refused (254) naming the action and the table, rather
// than failing half-way through a run.
import { randomBytes } from "node:crypto";
import {
  DeleteItemCommand,
  DeleteTableCommand,
  DescribeTableCommand,
  GetItemCommand,
  PutItemCommand,
  ScanCommand,
  UpdateItemCommand,
  type AttributeValue,
  type DynamoDBClient,
} from "@aws-sdk/client-dynamodb";
import { BadInput } from "../../lib/index.ts";
import { createTable, dynamoClient, lockTableName, LOCK_KEY, waitForTable } from "./connection.ts";
import { placeServers } from "../../cluster/external-proxies.ts";
import type { PlacedServer } from "../../cluster/external.ts";
import { credentialsOf, endpointUrl, regionOf, serverAt, urlOfServer, WHAT, type DynamoService } from "./account.ts";
import { removedOnce, type ExternalServiceContext, type OpenService } from "../../core/index.ts";
import type { RunOnService } from "../../core/index.ts";

const ADMIN_TIMEOUT_MS = 10_000;

/** Every action the run takes, in the order the probe takes them: what a policy must allow on the run's tables. */
export const ACTIONS = ["CreateTable", "DescribeTable", "PutItem", "UpdateItem", "GetItem", "Scan", "DeleteItem", "DeleteTable"] as const;
export type Action = (typeof ACTIONS)[number];

const found = new WeakMap<RunOnService, Promise<DynamoService>>();

/** The test's DynamoDB and account, found once (preflight, then the run's start). */
export function locate(test: RunOnService, env: NodeJS.ProcessEnv = process.env): Promise<DynamoService> {
  let f = found.get(test);
  if (!f) found.set(test, (f = find(test, env)));
  return f;
}

async function find(test: RunOnService, env: NodeJS.ProcessEnv): Promise<DynamoService> {
  const region = await regionOf(env);
  const servers = test.serverOptions.external ?? [];
  // --endpoints gave an address, or a proxy of the user's in front of one: plain http there.
  const given = servers.some((s) => s.host !== undefined || s.proxy !== undefined);
  let server: PlacedServer;
  let url: string;
  if (given) {
    [server] = await placeServers(test.toxiproxy, servers);
    url = urlOfServer(server);
  } else {
    const u = endpointUrl(env, region);
    [server, url] = [serverAt(u), u.origin];
  }
  return { url, server, ...(await credentialsOf(region, env)) };
}

const adminClient = (svc: DynamoService): DynamoDBClient => dynamoClient(svc.server, ADMIN_TIMEOUT_MS, { url: svc.url, account: svc.account, table: "" });

/** Why the account refused a request, for each error that says so. */
const REFUSED_BY_ACCOUNT: Record<string, string> = {
  AccessDeniedException: "the account's policies do not allow it",
  UnrecognizedClientException: "the service does not know the access key (another account's or endpoint's, or deleted)",
  InvalidSignatureException: "the signature did not match (a wrong secret key, or this machine's clock minutes off)",
  ExpiredTokenException: "the session token has expired",
  MissingAuthenticationTokenException: "the request carried no credentials it accepts",
};

/**
 * The sentence for a request the account refused (AccessDenied, an unknown
 * key, a bad signature, an expired token): the action and the table, and every
 * action the run needs; null for an error that is not such a refusal.
 */
export function accountRefusal(err: unknown, action: Action, table: string): string | null {
  const e = err as { name?: unknown; message?: unknown };
  const name = typeof e?.name === "string" ? e.name : "";
  const why = REFUSED_BY_ACCOUNT[name];
  if (!why) return null;
  return (
    `dynamodb:${action} on table ${table} was refused: ${why} (${name}: ${String(e.message ?? "").trim()}). ` +
    `The run needs ${ACTIONS.map((a) => `dynamodb:${a}`).join(", ")} on its tables (docs/clusters.md#dynamodb)`
  );
}

/** An error of a request of the run's to the user's DynamoDB, as a refusal of the run: what was refused, or that nothing answers. */
function refusal(err: unknown, action: Action, table: string, svc: DynamoService): BadInput {
  const refused = accountRefusal(err, action, table);
  if (refused) return new BadInput(`${WHAT}: at ${svc.url} with the credentials of ${svc.source}, ${refused}`);
  const e = err as { name?: string; code?: string; message?: string; $metadata?: { httpStatusCode?: number } };
  const what = `${e?.code ?? e?.name ?? "Error"}: ${e?.message ?? String(err)}`;
  // No HTTP answer at all: a refused connection, a name that does not resolve, a timeout.
  if (e?.$metadata?.httpStatusCode === undefined) return new BadInput(`${WHAT}: no DynamoDB answers at ${svc.url} (${what})`);
  return new BadInput(`${WHAT}: dynamodb:${action} on table ${table} at ${svc.url} failed (${what})`);
}

const errorName = (err: unknown): string => String((err as { name?: unknown })?.name ?? "");

/** The items in a table (a Scan that counts). */
async function countItems(c: DynamoDBClient, table: string): Promise<number> {
  let n = 0;
  let from: Record<string, AttributeValue> | undefined;
  do {
    const page = await c.send(new ScanCommand({ TableName: table, Select: "COUNT", ExclusiveStartKey: from }));
    n += page.Count ?? 0;
    from = page.LastEvaluatedKey;
  } while (from);
  return n;
}

/** The command that deletes a table left behind, for the messages that say one was. */
const deleteByHand = (svc: DynamoService, table: string): string =>
  `aws dynamodb delete-table --table-name ${table} --region ${svc.account.region}${svc.url.includes(".amazonaws.com") ? "" : ` --endpoint-url ${svc.url}`}`;

/**
 * Before anything starts: the region, the endpoint and the credentials found;
 * with --key-prefix, no table of the run's name there already; then everything
 * the run will do, once, on a probe table of its own named like the run's
 * (so a policy scoped to the run's names covers it), deleted again.
 */
export async function checkDynamoService(test: RunOnService, warn: (line: string) => void): Promise<void> {
  const svc = await locate(test);
  const c = adminClient(svc);
  try {
    const given = test.workloadOptions.keyPrefix;
    if (given !== undefined) {
      const table = lockTableName(given);
      let there: boolean;
      try {
        there = await c.send(new DescribeTableCommand({ TableName: table })).then(() => true);
      } catch (err) {
        if (errorName(err) !== "ResourceNotFoundException") throw refusal(err, "DescribeTable", table, svc);
        there = false;
      }
      if (there)
        throw new BadInput(
          `${WHAT}: --key-prefix ${JSON.stringify(given)} names the run's table ${table}, and ${svc.url} already has one of that name ` +
            `(someone else's, or a killed run's: ${deleteByHand(svc, table)}); the run makes its own and deletes it afterwards, so choose another prefix`,
        );
    }
    await probe(c, svc, lockTableName(`${given ?? "fencecheck:"}preflight-${randomBytes(3).toString("hex")}:`));
  } finally {
    c.destroy();
  }
  const endMs = Date.now() + (test.timeLimitS * 1000 + test.graceMs) * 1.1 + 60_000;
  if (svc.expires !== undefined && svc.expires < endMs)
    warn(`${WHAT}: the credentials of ${svc.source} expire at ${new Date(svc.expires).toISOString()}, before the run can end; its requests would then be refused`);
}

/** The run's actions once each on `table`, which is deleted again whatever happens. */
async function probe(c: DynamoDBClient, svc: DynamoService, table: string): Promise<void> {
  const step = async <T>(action: Action, request: () => Promise<T>): Promise<T> => {
    try {
      return await request();
    } catch (err) {
      throw refusal(err, action, table, svc);
    }
  };
  await step("CreateTable", () => createTable(c, table));
  let failure: unknown = null;
  try {
    const Key = { [LOCK_KEY]: { S: "preflight" } };
    await step("DescribeTable", () => waitForTable(c, table, "ACTIVE"));
    await step("PutItem", () => c.send(new PutItemCommand({ TableName: table, Item: { ...Key, n: { N: "0" } }, ConditionExpression: "attribute_not_exists(#k)", ExpressionAttributeNames: { "#k": LOCK_KEY } })));
    await step("UpdateItem", () => c.send(new UpdateItemCommand({ TableName: table, Key, UpdateExpression: "ADD #n :one", ExpressionAttributeNames: { "#n": "n" }, ExpressionAttributeValues: { ":one": { N: "1" } } })));
    await step("GetItem", () => c.send(new GetItemCommand({ TableName: table, Key, ConsistentRead: true })));
    await step("Scan", () => countItems(c, table));
    await step("DeleteItem", () => c.send(new DeleteItemCommand({ TableName: table, Key })));
  } catch (err) {
    failure = err;
  }
  try {
    // A table still CREATING cannot be deleted.
    await waitForTable(c, table, "ACTIVE").catch(() => {});
    await step("DeleteTable", () => c.send(new DeleteTableCommand({ TableName: table })));
    await step("DescribeTable", () => waitForTable(c, table, "gone"));
  } catch (err) {
    const left = `the probe table ${table} is left there: ${deleteByHand(svc, table)}`;
    if (failure instanceof BadInput) throw new BadInput(`${failure.message}. ${left}`);
    throw err instanceof BadInput ? new BadInput(`${err.message}. ${left}`) : err;
  }
  if (failure) throw failure;
}

/**
 * At the run's start: its table made, and its deletion handed to the process
 * group's teardown as soon as it exists (so a start that fails later, an
 * interruption, or a failed run removes it too); ACTIVE before the workers come.
 * A table of that name already there is not the run's: the run fails and leaves it.
 */
export async function openDynamoService(ctx: ExternalServiceContext): Promise<OpenService> {
  const svc = await locate(ctx.test);
  const table = lockTableName(ctx.keyPrefix);
  const c = adminClient(svc);
  try {
    try {
      await createTable(c, table);
    } catch (err) {
      if (errorName(err) === "ResourceInUseException") throw new Error(`the run's table ${table} is already at ${svc.url}: not the run's, so it is left alone (choose another --key-prefix)`);
      throw err;
    }
    ctx.started("lock_table", { name: table, url: svc.url, region: svc.account.region });
    const remove = removedOnce(
      ctx,
      ["table_removed", table],
      () => removeTable(svc, table),
      (why) => `could not delete the run's table ${table} at ${svc.url}: ${why}\n  delete it yourself: ${deleteByHand(svc, table)}`,
    );
    await waitForTable(c, table, "ACTIVE");
    return { servers: [svc.server], service: { dynamodb: { url: svc.url, account: svc.account, table } }, remove };
  } finally {
    c.destroy();
  }
}

/** The run's table deleted (once ACTIVE) and gone; how many items it had then (none if it was not there). */
async function removeTable(svc: DynamoService, table: string): Promise<number> {
  const c = adminClient(svc);
  try {
    if (!(await waitForTable(c, table, "ACTIVE"))) return 0;
    const n = await countItems(c, table);
    await c.send(new DeleteTableCommand({ TableName: table }));
    await waitForTable(c, table, "gone");
    return n;
  } finally {
    c.destroy();
  }
}
