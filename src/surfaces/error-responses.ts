import { type ApiError, nativeEnvelope } from "../errors.ts";
import { errorHeaders } from "./compat-access.ts";
import { elevenLabsError } from "./el/errors.ts";
import { openAiError } from "./oai/errors.ts";

/** The native flat envelope `{error}`, with the code's status. */
export function nativeError(err: ApiError): Response {
  return Response.json(nativeEnvelope(err), { status: err.status, headers: errorHeaders(err) });
}

/** An error as the surface a path belongs to spells it: native, or a compatibility surface's envelope. */
export function errorResponse(path: string, err: ApiError): Response {
  if (path === "/oai" || path.startsWith("/oai/")) return openAiError(err);
  if (path === "/el" || path.startsWith("/el/")) return elevenLabsError(err);
  return nativeError(err);
}
