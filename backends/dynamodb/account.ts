// Where a DynamoDB of the user's is, and whose account signs the requests
// (--backend dynamodb --deploy external): from --endpoints, or from the same
// places the AWS SDKs and CLI look. Found once, by the runner; the workers get
// the result over their IPC channel (runner/start-parts.ts), never from a file.
import { homedir } from "node:os";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { BadInput } from "../../lib/index.ts";
import type { DynamoAccount } from "./connection.ts";
import { bareHost } from "./proxied-agent.ts";
import type { PlacedServer } from "../../cluster/external.ts";

/** How messages name the run. */
export const WHAT = "--backend dynamodb --deploy external";

/** The user's DynamoDB as the run reaches it. `account.credentials` is a secret: nothing writes it down. */
export interface DynamoService {
  /** What requests are signed for (SigV4 covers the Host header) and a certificate is checked against. */
  url: string;
  /** Its one server, dynamodb-1, where this machine's sockets reach it: the URL's host and port, or --endpoints'. */
  server: PlacedServer;
  account: DynamoAccount & { credentials: NonNullable<DynamoAccount["credentials"]> };
  /** Where the credentials came from, in words (no part of them). */
  source: string;
  /** When temporary credentials run out (ms since the epoch); absent: they do not. */
  expires?: number;
}

/** The endpoint variables, in the order the SDKs read them. */
const ENDPOINT_VARIABLES = ["AWS_ENDPOINT_URL_DYNAMODB", "AWS_ENDPOINT_URL"] as const;

/** The region: AWS_REGION, AWS_DEFAULT_REGION (the CLI's), or the profile's in the config file, as the SDK reads it. */
export async function regionOf(env: NodeJS.ProcessEnv): Promise<string> {
  const given = env.AWS_REGION || env.AWS_DEFAULT_REGION;
  if (given) return given;
  const probe = new DynamoDBClient({});
  const fromProfile = await probe.config
    .region()
    .catch(() => null)
    .finally(() => probe.destroy());
  if (fromProfile) return fromProfile;
  throw new BadInput(
    `${WHAT}: no AWS region. Set AWS_REGION (or AWS_DEFAULT_REGION), or "region" in ${profileName(env)} of ${configFile(env)}; ` +
      `DynamoDB Local, LocalStack and dynalite take any (AWS_REGION=us-east-1)`,
  );
}

/**
 * The endpoint's URL when --endpoints does not give one: AWS_ENDPOINT_URL_DYNAMODB,
 * AWS_ENDPOINT_URL, or the region's own. http or https, a host and maybe a port, no path.
 */
export function endpointUrl(env: NodeJS.ProcessEnv, region: string): URL {
  const variable = ENDPOINT_VARIABLES.find((v) => env[v]);
  if (!variable) return new URL(`https://dynamodb.${region}.amazonaws.com`);
  const value = env[variable]!;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new BadInput(`${WHAT}: ${variable}=${value} is not a URL (http://host:port or https://host)`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new BadInput(`${WHAT}: ${variable}=${value} must be an http:// or https:// URL`);
  if ((url.pathname !== "/" && url.pathname !== "") || url.search || url.username) throw new BadInput(`${WHAT}: ${variable}=${value}: give the endpoint's scheme, host and port only`);
  return url;
}

/** dynamodb-1 at `url`'s host and port (the scheme's own when none is written). */
export function serverAt(url: URL): PlacedServer {
  return { name: "dynamodb-1", host: bareHost(url), port: Number(url.port) || (url.protocol === "https:" ? 443 : 80) };
}

/** The URL of a server --endpoints gave (host:port): plain http, as DynamoDB Local, LocalStack and dynalite serve. */
export const urlOfServer = (s: PlacedServer): string => `http://${s.host.includes(":") ? `[${s.host}]` : s.host}:${s.port}`;

const profileName = (env: NodeJS.ProcessEnv): string => `the profile ${JSON.stringify(env.AWS_PROFILE || "default")}${env.AWS_PROFILE ? " (AWS_PROFILE)" : ""}`;
const configFile = (env: NodeJS.ProcessEnv): string => env.AWS_CONFIG_FILE || `${homedir()}/.aws/config`;
const credentialsFile = (env: NodeJS.ProcessEnv): string => env.AWS_SHARED_CREDENTIALS_FILE || `${homedir()}/.aws/credentials`;

/** Where the SDK's default chain looks for credentials, in its order, for the message when it finds none. */
export function credentialPlaces(env: NodeJS.ProcessEnv): string[] {
  return [
    "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (with AWS_SESSION_TOKEN for temporary ones)",
    `${profileName(env)} in ${credentialsFile(env)} (AWS_SHARED_CREDENTIALS_FILE) and ${configFile(env)} (AWS_CONFIG_FILE): keys, sso_session, credential_process, role_arn`,
    "AWS_WEB_IDENTITY_TOKEN_FILE with AWS_ROLE_ARN",
    "a container's credentials (AWS_CONTAINER_CREDENTIALS_RELATIVE_URI or AWS_CONTAINER_CREDENTIALS_FULL_URI)",
    "an EC2 instance's metadata service",
  ];
}

/** The SDK's words for where credentials came from ($source), in ours. */
const SOURCES: Record<string, string> = {
  CREDENTIALS_ENV_VARS: "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY",
  CREDENTIALS_PROFILE: "a profile's keys",
  CREDENTIALS_PROFILE_SOURCE_PROFILE: "a profile's role",
  CREDENTIALS_PROFILE_SSO: "a profile's SSO session",
  CREDENTIALS_SSO: "SSO",
  CREDENTIALS_PROFILE_PROCESS: "a profile's credential_process",
  CREDENTIALS_PROCESS: "a credential_process",
  CREDENTIALS_ENV_VARS_STS_WEB_ID_TOKEN: "a web identity token",
  CREDENTIALS_PROFILE_STS_WEB_ID_TOKEN: "a profile's web identity token",
  CREDENTIALS_HTTP: "the container's credentials",
  CREDENTIALS_IMDS: "the instance's metadata service",
};

/** The SDK's default provider chain, as the user's own programs run it: the credentials, or BadInput naming where it looked. */
export async function credentialsOf(region: string, env: NodeJS.ProcessEnv): Promise<Pick<DynamoService, "account" | "source" | "expires">> {
  const client = new DynamoDBClient({ region });
  try {
    const c = await client.config.credentials();
    const source = Object.keys((c as { $source?: Record<string, string> }).$source ?? {})
      .map((k) => SOURCES[k])
      .find(Boolean);
    return {
      account: { region, credentials: { accessKeyId: c.accessKeyId, secretAccessKey: c.secretAccessKey, ...(c.sessionToken ? { sessionToken: c.sessionToken } : {}) } },
      source: source ?? "the SDK's default chain",
      ...(c.expiration ? { expires: c.expiration.getTime() } : {}),
    };
  } catch (err) {
    const message = (err as Error).message ?? String(err);
    if (/could not load credentials from any providers/i.test(message))
      throw new BadInput(
        `${WHAT}: no AWS credentials. The SDK's default chain looked at: ${credentialPlaces(env).join("; ")}. ` +
          `DynamoDB Local, LocalStack and dynalite take any: AWS_ACCESS_KEY_ID=x AWS_SECRET_ACCESS_KEY=x`,
      );
    throw new BadInput(`${WHAT}: could not load AWS credentials: ${message}`);
  } finally {
    client.destroy();
  }
}
