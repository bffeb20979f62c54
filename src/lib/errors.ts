import type { ContentfulStatusCode } from "hono/utils/http-status";

/**
 * The one error type of the API. Thrown anywhere below a route; the app's error handler answers
 * `{"error": message, ...extra}` with its status.
 */
export class ApiError extends Error {
  constructor(
    readonly status: ContentfulStatusCode,
    message: string,
    readonly extra: Record<string, unknown> = {},
    /** Response headers the answer carries (`Retry-After`). */
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

export const badRequest = (message: string, extra?: Record<string, unknown>) => new ApiError(400, message, extra);
export const forbidden = (message = "Invalid credentials.", extra?: Record<string, unknown>) =>
  new ApiError(403, message, extra);
export const notFound = (message = "Record not found") => new ApiError(404, message);
export const conflict = (message: string) => new ApiError(409, message);
export const unprocessable = (message: string, extra?: Record<string, unknown>) => new ApiError(422, message, extra);
export const tooManyRequests = (message = "Throttled", retryAfterSeconds?: number) =>
  new ApiError(429, message, {}, retryAfterSeconds ? { "Retry-After": String(Math.max(1, retryAfterSeconds)) } : {});
