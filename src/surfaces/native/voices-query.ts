import type { Catalogue } from "../../catalogue/catalogue.ts";
import { ApiError } from "../../errors.ts";
import { slug, VOICE_CATEGORIES } from "../../voices/voice-entry.ts";
import { VOICE_SORTS, type VoiceFilter, type VoiceQuery } from "../../voices/voice-query.ts";
import { integer, oneOf, query, text, timestamp } from "../account/query.ts";

// `GET /v1/voices`'s query (docs/voices.md): every bad value is 400 `invalid_request` naming the
// parameter, as on the account endpoints; unknown parameters too.

const SINGLE = ["q", "added_after", "sort", "limit", "cursor", "include_facets"];
const REPEATABLE = ["model", "provider", "language", "category", "filter"];

const LANGUAGE = /^[a-z]{2,3}(-[a-z0-9]{1,8})*$/;
const FILTER = /^([^:]+):(.+)$/;

const bad = (param: string, why: string) => new ApiError("invalid_request", why, { param });

/** Accumulates the values of one dimension from its own parameter and from `filter=<dimension>:…`. */
class Dimensions {
  readonly models = new Set<string>();
  readonly providers = new Set<string>();
  readonly languages = new Set<string>();
  readonly categories = new Set<string>();
  readonly filters: VoiceFilter[] = [];

  constructor(private readonly catalogue: Catalogue) {}

  /** `value` of facet `facet`, as the parameter `param` gave it. */
  add(param: string, facet: string, value: string): void {
    switch (facet) {
      case "model": {
        const served = this.catalogue.lookup(value, "tts");
        if (served.length === 0) throw bad(param, `model "${value}" is not a text-to-speech model of this server (GET /v1/models)`);
        for (const b of served) this.models.add(b.canonical);
        return;
      }
      case "provider":
        if (!this.catalogue.provider(value)) throw bad(param, `provider "${value}" is not served here (GET /v1/providers)`);
        this.providers.add(value);
        return;
      case "language": {
        const language = value.toLowerCase();
        if (!LANGUAGE.test(language)) throw bad(param, `"${value}" is not a language such as en or en-US`);
        this.languages.add(language);
        return;
      }
      case "category": {
        const category = slug(value);
        if (!(VOICE_CATEGORIES as readonly string[]).includes(category)) throw bad(param, `category "${value}" is none of ${VOICE_CATEGORIES.join(", ")}`);
        this.categories.add(category);
        return;
      }
      default:
        this.filters.push({ facet, value: slug(value) });
    }
  }

  /** The values given, or undefined for a dimension not filtered on. */
  static list(values: Set<string>): string[] | undefined {
    return values.size ? [...values] : undefined;
  }
}

export function voiceQuery(request: Request, catalogue: Catalogue): VoiceQuery {
  const params = query(request, SINGLE, REPEATABLE);
  const q = text(params, "q", 0, 200)?.trim() || undefined;
  const dims = new Dimensions(catalogue);
  for (const param of ["model", "provider", "language", "category"]) for (const value of params.getAll(param)) dims.add(param, param, value);
  for (const filter of params.getAll("filter")) {
    const m = FILTER.exec(filter.trim());
    if (!m) throw bad("filter", `"${filter}" is not facet:value, such as gender:female`);
    dims.add("filter", slug(m[1]), m[2].trim());
  }
  const sort = oneOf(params, "sort", VOICE_SORTS) ?? (q ? "relevance" : "featured");
  if (sort === "relevance" && !q) throw bad("sort", "sort=relevance needs a search text (q)");
  const addedAfter = timestamp(params, "added_after");
  const cursor = text(params, "cursor", 1, 512);
  return {
    ...(q ? { q } : {}),
    models: Dimensions.list(dims.models),
    providers: Dimensions.list(dims.providers),
    languages: Dimensions.list(dims.languages),
    categories: Dimensions.list(dims.categories),
    filters: dims.filters.length ? dims.filters : undefined,
    ...(addedAfter ? { addedAfter: addedAfter.getTime() } : {}),
    sort,
    limit: integer(params, "limit", 1, 100, 20),
    ...(cursor ? { cursor } : {}),
    includeFacets: oneOf(params, "include_facets", ["true", "false"]) === "true",
  };
}
