import { ApiError, type ErrorCode } from "../errors.ts";

// The planners' errors name the member of the typed request at fault (`voice`, `audioFormat`,
// `portable.speech_threshold`), not any wire's parameter: each surface renames them to its own.

/**
 * A refusal of `member`: the message is the member's name (which a surface renames with it)
 * followed by `rest`. A portable option is named in the message by its own name (`speech_threshold`),
 * which every surface's clients know, and in `param` as the member (`portable.speech_threshold`).
 */
export function refusal(code: ErrorCode, member: string, rest: string): ApiError {
  const named = member.replace(/^portable\./, "");
  return new ApiError(code, `${named}${rest}`, { param: member });
}

/**
 * Runs a planner and gives its refusal the surface's names: `name` maps a request member (or
 * undefined, for a refusal that names none) to the surface's parameter, or undefined to leave it.
 */
export function planWithNames<T>(plan: () => T, name: (member: string | undefined) => string | undefined): T {
  try {
    return plan();
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    const member = typeof err.extra.param === "string" ? err.extra.param : undefined;
    const param = name(member);
    if (param === undefined || param === member) throw err;
    const message = member && err.message.startsWith(member) ? param + err.message.slice(member.length) : err.message;
    throw new ApiError(err.code, message, { ...err.extra, param }, err.status);
  }
}
