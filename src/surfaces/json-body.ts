import { ApiError } from "../errors.ts";

/** A request body as JSON; anything else is 400 `invalid_request`. */
export async function jsonBody(request: Request): Promise<unknown> {
  try {
    return await request.json();
  } catch {
    throw new ApiError("invalid_request", "the body is not valid JSON");
  }
}
