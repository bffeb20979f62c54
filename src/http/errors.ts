import type { Context } from "hono";
import type { ApiError } from "../lib/errors";

/** The answer of an `ApiError`: `{"error": message, ...extra}` with its status and headers. */
export function errorResponse(c: Context, err: ApiError): Response {
  return c.json({ error: err.message, ...err.extra }, err.status, err.headers);
}
