// The resource's state in a DynamoDB table (dynalite, or a real endpoint), and
// the fencing decision DynamoDB's: a write is one conditional UpdateItem
// (`fence < :f`), which also adds one to the item's count of decisions and
// returns the item as it was, so max_before and the decision's place come from
// the same atomic step that decided it. DynamoDB has no transactions to lock a
// row with, so a refused write takes its place with a second update; the fence
// only ever rises, so the refusal still holds at that moment.
import { GetItemCommand, UpdateItemCommand, type AttributeValue } from "@aws-sdk/client-dynamodb";
import { classifyDynamoError, dynamoClient, ensureTable } from "./connection.ts";
import { committedDecider, OutcomeUnknown, type DecisionStore, type StoreVerdict } from "../../resource/committed.ts";
import type { Decider } from "../../resource/decider.ts";
import type { StoreDeciderModule } from "../../resource/committed.ts";

export const RESOURCE_TABLE = "fencecheck_resource";

export interface DynamoDeciderOptions {
  host: string;
  port: number;
  fencing: boolean;
  /** The table (created if missing); default fencecheck_resource. */
  table?: string;
  /** How long one request may take before its outcome is unknown. */
  requestTimeoutMs?: number;
}

// Every attribute through a name: "key" and "value" are reserved words.
const NAMES = { "#k": "key", "#v": "value", "#f": "fence", "#o": "decisions" };

const num = (a: AttributeValue | undefined): number | null => (a?.N === undefined ? null : Number(a.N));
/** A key's value and highest fence as an item holds them (the value as JSON text; null: never written). */
const stateOf = (item: Record<string, AttributeValue>): { data: unknown; maxSeen: number | null } => ({ data: item.value?.S === undefined ? null : JSON.parse(item.value.S), maxSeen: num(item.fence) });

export async function dynamoStore(opts: DynamoDeciderOptions): Promise<DecisionStore> {
  const table = opts.table ?? RESOURCE_TABLE;
  const timeout = opts.requestTimeoutMs ?? 5_000;
  // One attempt per request: the SDK's retry of a conditional write whose first
  // attempt took effect would be refused, and logged as a refusal it was not.
  const db = dynamoClient(opts, timeout);
  // Its own table, keyed by `key`, made as the lock table is.
  await ensureTable(db, table, "key");
  const keyOf = (key: string): Record<string, AttributeValue> => ({ key: { S: key } });

  /** One update that decides: the item as it was, or null when its condition failed. */
  const update = async (key: string, expression: string, condition: string | undefined, values: Record<string, AttributeValue>): Promise<Record<string, AttributeValue> | null> => {
    try {
      const r = await db.send(
        new UpdateItemCommand({
          TableName: table,
          Key: keyOf(key),
          UpdateExpression: expression,
          ConditionExpression: condition,
          ExpressionAttributeNames: namesIn(expression, condition),
          ExpressionAttributeValues: values,
          ReturnValues: "ALL_OLD",
        }),
      );
      return r.Attributes ?? {};
    } catch (e) {
      const f = classifyDynamoError(e);
      if (f.error === "condition-failed") return null;
      if (f.definite) throw e;
      throw new OutcomeUnknown(`DynamoDB did not answer the update (${f.error}: ${(e as Error).message}): the outcome is unknown`);
    }
  };
  /** Adds one to the key's decisions: the item as it is after (its place, its fence, its value). */
  const count = async (key: string): Promise<Record<string, AttributeValue>> => {
    const r = await db.send(
      new UpdateItemCommand({ TableName: table, Key: keyOf(key), UpdateExpression: "ADD #o :one", ExpressionAttributeNames: { "#o": NAMES["#o"] }, ExpressionAttributeValues: { ":one": { N: "1" } }, ReturnValues: "ALL_NEW" }),
    );
    return r.Attributes ?? {};
  };
  const accepted = (old: Record<string, AttributeValue>): StoreVerdict => ({ accepted: true, maxBefore: num(old.fence), order: (num(old.decisions) ?? 0) + 1 });
  const blind = async (key: string, value: AttributeValue): Promise<StoreVerdict> => accepted((await update(key, "SET #v = :v ADD #o :one", undefined, { ":v": value, ":one": { N: "1" } }))!);

  return {
    fencing: opts.fencing,
    async write(key, fence, data) {
      const value: AttributeValue = { S: JSON.stringify(data ?? null) };
      if (fence !== null) {
        // A fresh fence: the write, its fence and its place in one conditional step.
        const old = await update(key, "SET #v = :v, #f = :f ADD #o :one", "attribute_not_exists(#f) OR #f < :f", { ":v": value, ":f": { N: String(fence) }, ":one": { N: "1" } });
        if (old) return accepted(old);
      }
      // Fencing off lets a stale (or unfenced) write through, leaving the higher fence in place.
      if (!opts.fencing) return blind(key, value);
      // Refused. Its place is taken now; a lost reply here leaves a refusal
      // nobody is told of, which is not logged (the client hears an error).
      const now = await count(key);
      return { accepted: false, maxBefore: num(now.fence), order: num(now.decisions)! };
    },
    async read(key) {
      const now = await count(key);
      return { ...stateOf(now), order: num(now.decisions)! };
    },
    async peek(key) {
      const r = await db.send(new GetItemCommand({ TableName: table, Key: keyOf(key), ConsistentRead: true }));
      const item = r.Item ?? {};
      return stateOf(item);
    },
    async close() {
      db.destroy();
    },
  };
}

/** The names an update's expressions use. */
function namesIn(...expressions: (string | undefined)[]): Record<string, string> {
  const text = expressions.join(" ");
  return Object.fromEntries(Object.entries(NAMES).filter(([n]) => text.includes(n)));
}

export async function dynamoDecider(opts: DynamoDeciderOptions): Promise<Decider> {
  return committedDecider(await dynamoStore(opts));
}

/** The resource process's entry to this store (--resource, ResourceStore.decider): the config is what the store's start gave. */
export const decider: StoreDeciderModule["decider"] = (config, fencing) => dynamoDecider({ ...(config as Omit<DynamoDeciderOptions, "fencing">), fencing });
