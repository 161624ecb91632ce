// What the DynamoDB lock clients share: the lock table, one SDK client per
// logical client, and the one rule by which an error says whether a request
// took effect.
//
// The SDK must not retry: a conditional write whose first attempt took effect
// but whose reply was lost would be sent again, fail its condition (the first
// attempt changed the item) and be recorded as a definite `fail` for a lock the
// client in fact holds. And it must time out: without a request timeout that
// throws, a request sent into a partition waits forever (the SDK only warns).
import { CreateTableCommand, DynamoDBClient, type AttributeValue } from "@aws-sdk/client-dynamodb";
import { UnknownOutcome } from "./lock.ts";

// The SDK warns once per process that Node 20 will soon be unsupported: noise
// in every worker's log, and nothing the run can act on.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= "true";

/** The lock table every DynamoDB client keeps its items in, one item per lock key. */
export const LOCK_TABLE = "fencecheck_locks";
/** Its partition (HASH) key: the lock's name. */
export const LOCK_KEY = "lockKey";

/**
 * The lock table's name, under a run's prefix when it shares a DynamoDB with
 * others; a table name allows letters, digits, `_`, `-` and `.` only.
 */
export function lockTableName(prefix = ""): string {
  return `${prefix.replace(/[^A-Za-z0-9_.-]/g, "_")}${LOCK_TABLE}`;
}

export interface DynamoEndpoint {
  host: string;
  port: number;
}

/** Where the SDK's region and credentials come from: a local server takes any. */
export interface DynamoAccount {
  region: string;
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
}

/** A local server (dynalite) checks the form of a signature, not whose it is. */
export const LOCAL_ACCOUNT: DynamoAccount = { region: "us-east-1", credentials: { accessKeyId: "fencecheck", secretAccessKey: "fencecheck" } };

/** One SDK client on `endpoint`: one attempt per request, which throws after `timeoutMs`. */
export function dynamoClient(endpoint: DynamoEndpoint, timeoutMs: number, account: DynamoAccount = LOCAL_ACCOUNT): DynamoDBClient {
  return new DynamoDBClient({
    endpoint: `http://${endpoint.host}:${endpoint.port}`,
    region: account.region,
    ...(account.credentials ? { credentials: account.credentials } : {}),
    maxAttempts: 1,
    requestHandler: { requestTimeout: timeoutMs, connectionTimeout: timeoutMs, throwOnRequestTimeout: true },
  });
}

/** The lock table: made once by the backend when its server starts (runner/dynamodb-backend.ts); no error if it is there. */
export async function ensureLockTable(client: DynamoDBClient, table = lockTableName()): Promise<void> {
  try {
    await client.send(
      new CreateTableCommand({
        TableName: table,
        AttributeDefinitions: [{ AttributeName: LOCK_KEY, AttributeType: "S" }],
        KeySchema: [{ AttributeName: LOCK_KEY, KeyType: "HASH" }],
        BillingMode: "PAY_PER_REQUEST",
      }),
    );
  } catch (err) {
    if ((err as Error).name !== "ResourceInUseException") throw err;
  }
}

/** What an error says of its request: refused (it certainly did not take effect), or unknown. */
export interface DynamoFailure {
  definite: boolean;
  /** The history's short error code. */
  error: string;
}

/** The service's answers that refuse a request: it did not take effect. */
const REFUSALS: Record<string, string> = {
  ConditionalCheckFailedException: "condition-failed",
  ValidationException: "invalid-request",
  ResourceNotFoundException: "no-table",
};

/**
 * The one place an error of either SDK (v3's exceptions by `name`, v2's by
 * `code`) is judged. A refusal from the service, or a connection that was never
 * made, is definite. A timeout, a connection reset or closed under the request,
 * or anything else may have come after the service applied it: unknown.
 */
export function classifyDynamoError(err: unknown): DynamoFailure {
  const e = (err ?? {}) as { name?: unknown; code?: unknown; message?: unknown; originalError?: unknown };
  const name = typeof e.name === "string" ? e.name : "";
  const code = typeof e.code === "string" ? e.code : "";
  const refusal = REFUSALS[name] ?? REFUSALS[code];
  if (refusal) return { definite: true, error: refusal };
  // v2 wraps a socket's error (NetworkingError, TimeoutError) around the original's code.
  const inner = (e.originalError as { code?: unknown } | undefined)?.code;
  const sys = code === "NetworkingError" && typeof inner === "string" ? inner : code;
  if (sys === "ECONNREFUSED") return { definite: true, error: "conn-refused" };
  const message = typeof e.message === "string" ? e.message : String(err);
  if (sys === "ECONNRESET" || sys === "EPIPE" || /socket hang up/i.test(message)) return { definite: false, error: "conn-reset" };
  if (sys === "ETIMEDOUT" || name === "TimeoutError" || code === "TimeoutError" || /timed? ?out/i.test(message)) return { definite: false, error: "timeout" };
  const what = (name && name !== "Error" ? name : code) || "error";
  return { definite: false, error: what.replace(/Exception$/, "").replace(/([a-z])([A-Z])/g, "$1-$2").toLowerCase() };
}

/** A request's answer, or the service's refusal of it; an unknown outcome is thrown (UnknownOutcome). */
export type Sent<T> = { ok: true; out: T } | { ok: false; error: string };

/** Send one request and judge its error once: refused, or thrown as unknown. */
export async function sendOnce<T>(request: () => Promise<T>): Promise<Sent<T>> {
  try {
    return { ok: true, out: await request() };
  } catch (err) {
    const f = classifyDynamoError(err);
    if (f.definite) return { ok: false, error: f.error };
    throw new UnknownOutcome(f.error, `${f.error}: ${(err as Error)?.message ?? err}`);
  }
}

/** The attribute values of an item as numbers and strings (the lock items hold no other types). */
export function plainItem(item: Record<string, AttributeValue> | undefined): Record<string, string | number> | null {
  if (!item) return null;
  const out: Record<string, string | number> = {};
  for (const [k, v] of Object.entries(item)) {
    if (v.N !== undefined) out[k] = Number(v.N);
    else if (v.S !== undefined) out[k] = v.S;
  }
  return out;
}
