// What the DynamoDB lock clients share: the lock table, one SDK client per
// logical client, and the one rule by which an error says whether a request
// took effect.
//
// The SDK must not retry: a conditional write whose first attempt took effect
// but whose reply was lost would be sent again, fail its condition (the first
// attempt changed the item) and be recorded as a definite `fail` for a lock the
// client in fact holds. And it must time out: without a request timeout that
// throws, a request sent into a partition waits forever (the SDK only warns).
import { CreateTableCommand, DescribeTableCommand, DynamoDBClient, GetItemCommand, UpdateItemCommand, type AttributeValue } from "@aws-sdk/client-dynamodb";
import type { Agent as HttpAgent } from "node:http";
import type { Agent as HttpsAgent } from "node:https";
import { sleep, type Rng } from "../../lib/index.ts";
import { proxiedAgent } from "./proxied-agent.ts";
import { UnknownOutcome, type ClientContext } from "../../clients/lock.ts";

/** Where the DynamoDB SDK's region and credentials come from: a local server takes any. */
export interface DynamoAccount {
  region: string;
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
}

/**
 * A DynamoDB of the user's (--deploy external): the URL its requests are signed
 * for (http or https), the account they are signed with, and the run's own lock
 * table. It carries credentials: it reaches the workers over their IPC channel
 * only, and nothing writes it down.
 */
export interface DynamoAccess {
  url: string;
  account: DynamoAccount;
  table: string;
}

/** What a DynamoDB of the user's gives the clients (OpenService.service), under the backend's name. */
export const accessOf = (ctx: ClientContext): DynamoAccess | undefined => ctx.service?.dynamodb as DynamoAccess | undefined;

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

/** A local server (dynalite) checks the form of a signature, not whose it is. */
export const LOCAL_ACCOUNT: DynamoAccount = { region: "us-east-1", credentials: { accessKeyId: "fencecheck", secretAccessKey: "fencecheck" } };

/**
 * One SDK client: one attempt per request, which throws after `timeoutMs`. On a
 * server of the run's own (no `access`) it talks to `endpoint` as its URL. On
 * the user's, it signs for `access.url`, and only its sockets go to `endpoint`
 * (the worker's link through the fault proxy; backends/dynamodb/proxied-agent.ts).
 */
export function dynamoClient(endpoint: DynamoEndpoint, timeoutMs: number, access?: DynamoAccess): DynamoDBClient {
  const account = access?.account ?? LOCAL_ACCOUNT;
  return new DynamoDBClient({
    endpoint: access?.url ?? `http://${endpoint.host}:${endpoint.port}`,
    region: account.region,
    ...(account.credentials ? { credentials: account.credentials } : {}),
    maxAttempts: 1,
    requestHandler: { requestTimeout: timeoutMs, connectionTimeout: timeoutMs, throwOnRequestTimeout: true, ...(access ? agentsFor(access.url, endpoint) : {}) },
  });
}

/** The agent option of either SDK's handler for `url`, its sockets dialing `via`. */
export function agentsFor(url: string, via: DynamoEndpoint): { httpAgent: HttpAgent } | { httpsAgent: HttpsAgent } {
  const u = new URL(url);
  const agent = proxiedAgent(u, via);
  return u.protocol === "https:" ? { httpsAgent: agent as HttpsAgent } : { httpAgent: agent };
}

/** One CreateTable of a table keyed by the string `hashKey` (the lock table's `lockKey`, the resource's `key`), billed per request. */
export const createTable = (client: DynamoDBClient, table: string, hashKey = LOCK_KEY) =>
  client.send(
    new CreateTableCommand({
      TableName: table,
      AttributeDefinitions: [{ AttributeName: hashKey, AttributeType: "S" }],
      KeySchema: [{ AttributeName: hashKey, KeyType: "HASH" }],
      BillingMode: "PAY_PER_REQUEST",
    }),
  );

/** The table's status (DescribeTable), or null when it is not there. */
const tableStatus = (client: DynamoDBClient, table: string): Promise<string | null> =>
  client.send(new DescribeTableCommand({ TableName: table })).then(
    (r) => r.Table?.TableStatus ?? "UNKNOWN",
    (err: unknown) => {
      if ((err as Error)?.name === "ResourceNotFoundException") return null;
      throw err;
    },
  );

/**
 * Until the table is ACTIVE (true) or not there (false). A new table is
 * CREATING for a while, and a deleted one DELETING: seconds on DynamoDB, half a
 * second on a dynalite started with its defaults (ours start with 0 ms).
 */
export async function waitForTable(client: DynamoDBClient, table: string, until: "ACTIVE" | "gone", timeoutMs = 120_000): Promise<boolean> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const status = await tableStatus(client, table);
    if (status === null) return false;
    if (status === "ACTIVE" && until === "ACTIVE") return true;
    if (Date.now() > end) throw new Error(`table ${table} is still ${status} after ${timeoutMs / 1000} s`);
    await sleep(until === "gone" ? 200 : 50);
  }
}

/** A table of ours made unless it is there, and ACTIVE: the lock table (backends/dynamodb/start.ts), the resource's (backends/dynamodb/decider.ts). */
export async function ensureTable(client: DynamoDBClient, table: string, hashKey = LOCK_KEY): Promise<void> {
  try {
    await createTable(client, table, hashKey);
  } catch (err) {
    if ((err as Error).name !== "ResourceInUseException") throw err;
  }
  if (!(await waitForTable(client, table, "ACTIVE"))) throw new Error(`table ${table} was made and is not there`);
}

/** The lock table: made once by the backend when its server starts (backends/dynamodb/start.ts); no error if it is there. */
export const ensureLockTable = (client: DynamoDBClient, table = lockTableName()): Promise<void> => ensureTable(client, table, LOCK_KEY);

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
  // v2 wraps a socket's error in its own (UnknownEndpoint around NetworkingError around ECONNREFUSED).
  const chain: Array<{ name?: unknown; code?: unknown; message?: unknown; originalError?: unknown }> = [];
  for (let e = err as (typeof chain)[number] | undefined; e && typeof e === "object" && chain.length < 4; e = e.originalError as typeof e) chain.push(e);
  const str = (v: unknown): string => (typeof v === "string" ? v : "");
  const names = chain.flatMap((e) => [str(e.name), str(e.code)]).filter(Boolean);
  const message = chain.map((e) => str(e.message)).join("; ") || String(err);
  const refusal = names.map((n) => REFUSALS[n]).find(Boolean);
  if (refusal) return { definite: true, error: refusal };
  if (names.includes("ECONNREFUSED") || /\bconnect ECONNREFUSED\b/.test(message)) return { definite: true, error: "conn-refused" };
  if (names.includes("ECONNRESET") || names.includes("EPIPE") || /socket hang up/i.test(message)) return { definite: false, error: "conn-reset" };
  if (names.includes("ETIMEDOUT") || names.includes("TimeoutError") || /timed? ?out/i.test(message)) return { definite: false, error: "timeout" };
  const what = names.find((n) => n !== "Error") ?? "error";
  return { definite: false, error: what.replace(/Exception$/, "").replace(/([a-z])([A-Z])/g, "$1-$2").toLowerCase() };
}

/** A request's answer, or the service's refusal of it; an unknown outcome is thrown (UnknownOutcome). */
export type Sent<T> = { ok: true; out: T } | { ok: false; error: string };

/** The refusal an error is (its short code); an error of unknown outcome is thrown as UnknownOutcome. */
export function refusalOrThrow(err: unknown): string {
  const f = classifyDynamoError(err);
  if (f.definite) return f.error;
  throw new UnknownOutcome(f.error, `${f.error}: ${(err as Error)?.message ?? err}`);
}

/** Send one request and judge its error once: refused, or thrown as unknown. */
export async function sendOnce<T>(request: () => Promise<T>): Promise<Sent<T>> {
  try {
    return { ok: true, out: await request() };
  } catch (err) {
    return { ok: false, error: refusalOrThrow(err) };
  }
}

/** The attribute values of an item as numbers and strings (the lock items hold no other types). */
function plainItem(item: Record<string, AttributeValue> | undefined): LockItem | null {
  if (!item) return null;
  const out: LockItem = {};
  for (const [k, v] of Object.entries(item)) {
    if (v.N !== undefined) out[k] = Number(v.N);
    else if (v.S !== undefined) out[k] = v.S;
  }
  return out;
}

/** A lock item's attributes as numbers and strings. */
export type LockItem = Record<string, string | number>;

/** An UpdateItem on one lock item, made only if `condition` holds. */
export interface ConditionalUpdate {
  /** SET/ADD/REMOVE, naming each attribute as #name (DynamoDB refuses reserved words such as owner in expressions). */
  update: string;
  condition: string;
  /** :placeholders and their values. */
  values: Record<string, string | number>;
}

/** The #names of the expressions, each for the attribute of that name. */
function attributeNames(...expressions: string[]): Record<string, string> {
  return Object.fromEntries(expressions.flatMap((e) => [...e.matchAll(/#(\w+)/g)]).map((m) => [m[0], m[1]]));
}

const typed = (v: string | number): AttributeValue => (typeof v === "number" ? { N: String(v) } : { S: v });

/** The lock table as one logical client reaches it: an SDK client of its own, one request at a time judged. */
export class LockTable {
  private readonly client: DynamoDBClient;

  readonly name: string;

  /** `access`: a DynamoDB of the user's, its table the run's; absent: the run's own server and its lock table. */
  constructor(endpoint: DynamoEndpoint, timeoutMs: number, access?: DynamoAccess) {
    this.client = dynamoClient(endpoint, timeoutMs, access);
    this.name = access?.table ?? lockTableName();
  }

  /** One conditional UpdateItem: the item as it is after it, or the refusal (condition-failed when its condition did not hold). */
  async update(key: string, u: ConditionalUpdate): Promise<Sent<LockItem>> {
    const r = await sendOnce(() =>
      this.client.send(
        new UpdateItemCommand({
          TableName: this.name,
          Key: { [LOCK_KEY]: { S: key } },
          UpdateExpression: u.update,
          ConditionExpression: u.condition,
          ExpressionAttributeNames: attributeNames(u.update, u.condition),
          ExpressionAttributeValues: Object.fromEntries(Object.entries(u.values).map(([k, v]) => [k, typed(v)])),
          ReturnValues: "ALL_NEW",
        }),
      ),
    );
    return r.ok ? { ok: true, out: plainItem(r.out.Attributes) ?? {} } : r;
  }

  /** The lock item as it is now (a strongly consistent read), or null when there is none. */
  async read(key: string): Promise<Sent<LockItem | null>> {
    const r = await sendOnce(() => this.client.send(new GetItemCommand({ TableName: this.name, Key: { [LOCK_KEY]: { S: key } }, ConsistentRead: true })));
    return r.ok ? { ok: true, out: plainItem(r.out.Item) } : r;
  }

  close(): void {
    this.client.destroy();
  }
}

/** What the project's own DynamoDB lock clients share: the lock table, their random source, an owner name per hold. */
export abstract class LockTableClient {
  protected readonly items: LockTable;
  protected readonly rng: Rng;
  private readonly ownerPrefix: string;
  private holds = 0;

  constructor(ctx: ClientContext) {
    this.items = new LockTable(ctx.endpoints[0], ctx.commandTimeoutMs, accessOf(ctx));
    this.rng = ctx.rng;
    this.ownerPrefix = ctx.ownerPrefix;
  }

  /** Unique per acquire of this logical client. */
  protected newOwner(): string {
    return `${this.ownerPrefix}-h${++this.holds}`;
  }

  async close(): Promise<void> {
    this.items.close();
  }
}

/** A refused renew or release: its condition failing means the lock is someone else's, or nobody's. */
export const notOwner = (error: string): { type: "fail"; error: string } => ({ type: "fail", error: error === "condition-failed" ? "not-owner" : error });
