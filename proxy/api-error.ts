// The errors the API answers with, worded and numbered as Toxiproxy words and
// numbers them, so a client written against Toxiproxy sees what it expects. The
// body is always {"error": message, "status": code}.

export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
    this.name = "ApiError";
  }

  toJSON(): { error: string; status: number } {
    return { error: this.message, status: this.status };
  }
}

export const badBody = (why: string): ApiError => new ApiError(`bad request body: ${why}`, 400);
export const missingField = (field: string): ApiError => new ApiError(`missing required field: ${field}`, 400);
export const proxyNotFound = (): ApiError => new ApiError("proxy not found", 404);
export const proxyExists = (): ApiError => new ApiError("proxy already exists", 409);
export const invalidStream = (): ApiError => new ApiError("stream was invalid, can be either upstream or downstream", 400);
export const invalidToxicType = (): ApiError => new ApiError("invalid toxic type", 400);
export const toxicExists = (): ApiError => new ApiError("toxic already exists", 409);
export const toxicNotFound = (): ApiError => new ApiError("toxic not found", 404);

/** Anything that is not already an ApiError is the server's fault: 500, as Toxiproxy does. */
export function asApiError(e: unknown): ApiError {
  if (e instanceof ApiError) return e;
  return new ApiError(e instanceof Error ? e.message : String(e), 500);
}
