import type { AppContext } from "../context.ts";
import { ApiError, toApiError } from "../errors.ts";
import { errorResponse } from "./error-responses.ts";

/**
 * What an error thrown while answering a request becomes, in the envelope of its path's surface:
 * an `ApiError` as it is, Elysia's own (`code`) as the interface's, anything else logged and
 * answered as an internal error.
 */
export function errorAnswer(ctx: AppContext, path: string, error: unknown, code?: string | number): Response {
  let err: ApiError;
  if (error instanceof ApiError) err = error;
  else if (code === "NOT_FOUND") err = new ApiError("not_found", "no such endpoint");
  else if (code === "VALIDATION" || code === "PARSE") err = new ApiError("invalid_request", "the request is not valid");
  else {
    ctx.log.error({ err: error }, "unhandled error");
    err = toApiError(error);
  }
  return errorResponse(path, err);
}
