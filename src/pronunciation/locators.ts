import { ApiError } from "../errors.ts";
import { isObject } from "../util/is-object.ts";

// How requests name pronunciation dictionaries (docs/pronunciation.md#naming-dictionaries): in a
// query, `pronunciation_dictionaries=id[:version_id],…`; in a body, an array of ids or of
// ElevenLabs' locators (`{pronunciation_dictionary_id, version_id?}`). At most MAX_LOCATORS.

/** A request's reference to a dictionary: its latest version unless one is named. */
export interface Locator {
  id: string;
  versionId?: string;
}

/** Dictionaries one request may name (ElevenLabs allows three). */
export const MAX_LOCATORS = 3;

const ID = /^[A-Za-z0-9_-]{1,64}$/;

function locator(id: unknown, versionId: unknown, param: string): Locator {
  if (typeof id !== "string" || !ID.test(id)) throw new ApiError("invalid_request", `${param} names a dictionary by an id of 1 to 64 letters, digits, - or _`, { param });
  if (versionId === undefined || versionId === null || versionId === "") return { id };
  if (typeof versionId !== "string" || !ID.test(versionId)) throw new ApiError("invalid_request", `${param} has a malformed version id`, { param });
  return { id, versionId };
}

function counted(locators: Locator[], param: string): Locator[] {
  if (locators.length > MAX_LOCATORS) throw new ApiError("invalid_request", `at most ${MAX_LOCATORS} pronunciation dictionaries per request`, { param });
  return locators;
}

export function locatorsOfQuery(value: string | null, param = "pronunciation_dictionaries"): Locator[] {
  if (!value) return [];
  return counted(
    value.split(",").map((part) => {
      const [id, versionId, extra] = part.trim().split(":");
      if (extra !== undefined) throw new ApiError("invalid_request", `${param} takes id or id:version_id, comma-separated`, { param });
      return locator(id, versionId, param);
    }),
    param,
  );
}

export function locatorsOfBody(value: unknown, param: string): Locator[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new ApiError("invalid_request", `${param} must be an array`, { param });
  return counted(
    value.map((item, i) => (isObject(item) ? locator(item.pronunciation_dictionary_id, item.version_id, `${param}[${i}]`) : locator(item, undefined, `${param}[${i}]`))),
    param,
  );
}
