import { ApiError } from "../errors.ts";

/** The caller's provider preferences, from the HTTP `provider` object or the WebSocket query. */
export interface ProviderPreferences {
  only?: string[];
  ignore?: string[];
  order?: string[];
  allowFallbacks: boolean;
}

export const NO_PREFERENCES: ProviderPreferences = { allowFallbacks: true };

/** `a,b` and repeated keys both work; blanks are dropped. */
/** What the query form is read through: a query's parameters, or fields that speak its vocabulary. */
type QueryFields = Pick<URLSearchParams, "get" | "getAll">;

function idList(params: QueryFields, key: string): string[] | undefined {
  const values = params.getAll(key);
  if (values.length === 0) return undefined;
  return values
    .flatMap((v) => v.split(","))
    .map((v) => v.trim())
    .filter(Boolean);
}

/** WebSocket form: `provider_order`, `provider_only`, `provider_ignore`, `allow_fallbacks`. */
export function preferencesFromQuery(params: QueryFields): ProviderPreferences {
  return {
    only: idList(params, "provider_only"),
    ignore: idList(params, "provider_ignore"),
    order: idList(params, "provider_order"),
    allowFallbacks: params.get("allow_fallbacks") !== "false",
  };
}

function stringArray(value: unknown, field: string): string[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value) || value.some((v) => typeof v !== "string")) {
    throw new ApiError("invalid_request", `provider.${field} must be an array of provider ids`);
  }
  return value as string[];
}

/** HTTP form: `{only, ignore, order, allow_fallbacks}`. */
export function preferencesFromBody(value: unknown): ProviderPreferences {
  if (value === undefined || value === null) return NO_PREFERENCES;
  if (typeof value !== "object" || Array.isArray(value)) {
    throw new ApiError("invalid_request", "provider must be an object");
  }
  const o = value as Record<string, unknown>;
  if (o.allow_fallbacks !== undefined && typeof o.allow_fallbacks !== "boolean") {
    throw new ApiError("invalid_request", "provider.allow_fallbacks must be a boolean");
  }
  return {
    only: stringArray(o.only, "only"),
    ignore: stringArray(o.ignore, "ignore"),
    order: stringArray(o.order, "order"),
    allowFallbacks: o.allow_fallbacks !== false,
  };
}
