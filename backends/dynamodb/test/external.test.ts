// Where a DynamoDB of the user's is found, and how a refusal by its account is
// told: pure functions, since a dynalite accepts any credentials and never
// denies a permission.
import { describe, it, expect } from "vitest";
import { endpointUrl, serverAt, urlOfServer } from "../account.ts";
import { accountRefusal, ACTIONS } from "../external.ts";
import { BadInput } from "../../../lib/index.ts";

/** An error as the v3 SDK throws a service's refusal. */
const serviceError = (name: string, message: string) => Object.assign(new Error(message), { name, $metadata: { httpStatusCode: 400 } });

describe("accountRefusal", () => {
  const table = "fencecheck_20261127T092707.724Z_fencecheck_locks";
  it.each([
    ["AccessDeniedException", "User: arn:aws:iam::123456789012:user/ci is not authorized to perform: dynamodb:CreateTable", /the account's policies do not allow it/],
    ["UnrecognizedClientException", "The security token included in the request is invalid.", /does not know the access key/],
    ["InvalidSignatureException", "The request signature we calculated does not match the signature you provided.", /a wrong secret key, or this machine's clock minutes off/],
    ["ExpiredTokenException", "The security token included in the request is expired", /the session token has expired/],
  ])("%s: the action, the table, why, the service's words, and every action the run needs", (name, message, why) => {
    const said = accountRefusal(serviceError(name, message), "CreateTable", table);
    expect(said).toMatch(new RegExp(`^dynamodb:CreateTable on table ${table.replace(/\./g, "\\.")} was refused: `));
    expect(said).toMatch(why);
    expect(said).toContain(`(${name}: ${message})`);
    expect(said).toContain(ACTIONS.map((a) => `dynamodb:${a}`).join(", "));
  });

  it("names the action it was given", () => {
    expect(accountRefusal(serviceError("AccessDeniedException", "no"), "DeleteTable", "t")).toMatch(/^dynamodb:DeleteTable on table t was refused/);
  });

  it.each([
    ["a condition that failed", serviceError("ConditionalCheckFailedException", "The conditional request failed")],
    ["a table that is not there", serviceError("ResourceNotFoundException", "Requested resource not found")],
    ["a refused connection", Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:1"), { code: "ECONNREFUSED" })],
    ["no error object at all", "boom"],
  ])("%s is no refusal by the account", (_what, err) => {
    expect(accountRefusal(err, "PutItem", "t")).toBeNull();
  });
});

describe("endpointUrl", () => {
  it("AWS_ENDPOINT_URL_DYNAMODB first, then AWS_ENDPOINT_URL, else the region's own", () => {
    expect(endpointUrl({ AWS_ENDPOINT_URL_DYNAMODB: "http://localhost:8000", AWS_ENDPOINT_URL: "http://localhost:4566" }, "eu-west-3").origin).toBe("http://localhost:8000");
    expect(endpointUrl({ AWS_ENDPOINT_URL: "http://localhost:4566" }, "eu-west-3").origin).toBe("http://localhost:4566");
    expect(endpointUrl({}, "eu-west-3").origin).toBe("https://dynamodb.eu-west-3.amazonaws.com");
  });

  it.each([
    ["not a URL", "localhost:8000", /AWS_ENDPOINT_URL_DYNAMODB=localhost:8000 must be an http:\/\/ or https:\/\/ URL/],
    ["another scheme", "ftp://localhost", /must be an http:\/\/ or https:\/\/ URL/],
    ["a path", "https://example.com/dynamo", /give the endpoint's scheme, host and port only/],
    ["garbage", "::", /is not a URL/],
  ])("%s is refused, naming the variable", (_what, value, message) => {
    expect(() => endpointUrl({ AWS_ENDPOINT_URL_DYNAMODB: value }, "eu-west-3")).toThrow(BadInput);
    expect(() => endpointUrl({ AWS_ENDPOINT_URL_DYNAMODB: value }, "eu-west-3")).toThrow(message);
  });

  it("dynamodb-1 at the URL's host and port, the scheme's port when none is written", () => {
    expect(serverAt(new URL("https://dynamodb.eu-west-3.amazonaws.com"))).toEqual({ name: "dynamodb-1", host: "dynamodb.eu-west-3.amazonaws.com", port: 443 });
    expect(serverAt(new URL("http://localhost"))).toEqual({ name: "dynamodb-1", host: "localhost", port: 80 });
    expect(serverAt(new URL("http://[::1]:8000"))).toEqual({ name: "dynamodb-1", host: "::1", port: 8000 });
    expect(urlOfServer({ name: "dynamodb-1", host: "::1", port: 8000 })).toBe("http://[::1]:8000");
  });
});
