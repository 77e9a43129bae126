import { MAX_RULES } from "../pronunciation/rules.ts";
import type { DocumentPart, Operation, Schema } from "./document-types.ts";
import { EL_KEY_FAILURES } from "./el-speech-paths.ts";
import { failures, KEY_FAILURES, type Surface } from "./error-envelopes.ts";
import { answer, binary, formBody, json, jsonBody, pathParam, query } from "./operation.ts";
import { array, boolean, constant, file, integer, nullable, object, ref, string, timestamp } from "./schema.ts";
import { BEARER, EL_KEY } from "./security.ts";

// Pronunciation dictionaries (docs/pronunciation.md): `/v1/pronunciation-dictionaries` in the
// native envelope and `/el/v1/pronunciation-dictionaries` as ElevenLabs' SDK calls them.

const common = { string_to_replace: string("The text the rule matches") };
const flags = { case_sensitive: boolean("Default true"), word_boundaries: boolean("Match whole words only; default true") };
const RULE: Schema = {
  oneOf: [
    object({ type: constant("alias"), ...common, alias: string("Said instead") }, flags),
    object(
      { type: constant("phoneme"), ...common, phoneme: string(), alphabet: string("`ipa` or `cmu-arpabet`") },
      { ...flags, alias: string("Said instead by a provider that takes no phonemes (this router's own member)") },
    ),
  ],
};
const RULES = array(ref("PronunciationRule"), `1 to ${MAX_RULES} rules, applied in order`);
const ID = pathParam("id", "The dictionary's id");
const VERSION = pathParam("version_id", "One of the dictionary's versions");
const PAGE = [query("cursor", "The previous page's `next_cursor`"), query("page_size", "Dictionaries per page", integer(undefined, { minimum: 1, maximum: 100, default: 30 }))];
const NEW_FORM = formBody(object({ name: string(), file: file("A PLS lexicon (W3C Pronunciation Lexicon Specification 1.0)") }, { description: string() }));
const NEW_RULES = jsonBody(object({ name: string(), rules: RULES }, { description: string() }));
const REMOVE = jsonBody(object({ rule_strings: array(string(), "The `string_to_replace` of each rule to remove") }));
const PLS = answer("The version's rules as a PLS lexicon", binary("application/pls+xml"));

const nativeSummary = {
  id: string(),
  name: string(),
  description: nullable(string()),
  version_id: string("The latest version"),
  rules_count: integer(),
  created_at: timestamp(),
  archived_at: nullable(timestamp()),
};
const elMetadata = {
  id: string(),
  latest_version_id: string(),
  latest_version_rules_num: integer(),
  name: string(),
  permission_on_resource: constant("admin"),
  created_by: string("The tenant's id"),
  creation_time_unix: integer(),
  archived_time_unix: nullable(integer()),
  description: nullable(string()),
};
const elAdded = object({
  id: string(),
  name: string(),
  created_by: string(),
  creation_time_unix: integer(),
  version_id: string(),
  version_rules_num: integer(),
  description: nullable(string()),
  permission_on_resource: constant("admin"),
});
const elChanged = object({ id: string(), version_id: string("The new version"), version_rules_num: integer() });

function operations(surface: Surface) {
  const el = surface === "el";
  const tags = [el ? "ElevenLabs-compatible" : "pronunciation dictionaries"];
  const security = el ? EL_KEY : BEARER;
  const keys = el ? EL_KEY_FAILURES : KEY_FAILURES;
  const fails = (extra: Record<number, string> = {}) => failures(surface, { ...keys, ...extra });
  const bad = { 400: "`invalid_request` naming the field (a rule, a name, a lexicon that is not PLS)", 413: "`payload_too_large`" };
  const missing = { 404: "`not_found`: no such dictionary (or version) of this tenant" };
  const whole = el ? object({ ...elMetadata, rules: RULES }) : object({ ...nativeSummary, rules: RULES });
  const changed = el ? elChanged : whole;
  const op = (operationId: string, summary: string, rest: Partial<Operation>): Operation => ({ operationId: (el ? "el" : "") + operationId, summary, tags, security, ...rest }) as Operation;
  const rulesChange = (id: string, summary: string, body: Operation["requestBody"]) => ({
    post: op(id, summary, { parameters: [ID], requestBody: body, responses: { 200: answer("The new version", json(changed)), ...fails({ ...bad, ...missing }) } }),
  });
  return {
    list: op("ListPronunciationDictionaries", "The tenant's dictionaries, newest first", {
      parameters: PAGE,
      responses: {
        200: answer(
          "A page",
          json(
            el
              ? object({ pronunciation_dictionaries: array(object(elMetadata)), next_cursor: nullable(string()), has_more: boolean() })
              : object({ dictionaries: array(object(nativeSummary)), has_more: boolean(), next_cursor: nullable(string()) }),
          ),
        ),
        ...fails({ 400: "`invalid_request`: a bad `page_size` or `cursor`" }),
      },
    }),
    get: op("GetPronunciationDictionary", "A dictionary with its latest rules", { parameters: [ID], responses: { 200: answer("The dictionary", json(whole)), ...fails(missing) } }),
    add: rulesChange("AddPronunciationRules", "Add rules (one for a string already there replaces it): a new version", jsonBody(object({ rules: RULES }))),
    remove: rulesChange("RemovePronunciationRules", "Remove the rules for these strings: a new version", REMOVE),
    set: rulesChange("SetPronunciationRules", "Replace all the rules: a new version", jsonBody(object({ rules: RULES }))),
    download: op("DownloadPronunciationDictionary", "A version as a PLS file", { parameters: [ID, VERSION], responses: { 200: PLS, ...fails(missing) } }),
    create: (id: string, summary: string, body: Operation["requestBody"]) =>
      op(id, summary, { requestBody: body, responses: { [el ? 200 : 201]: answer("The new dictionary", json(el ? elAdded : whole)), ...fails(bad) } }),
  };
}

const native = operations("native");
const el = operations("el");
const N = "/v1/pronunciation-dictionaries";
const E = "/el/v1/pronunciation-dictionaries";

export const pronunciationPaths: DocumentPart = {
  schemas: { PronunciationRule: RULE },
  paths: {
    [N]: {
      post: native.create("CreatePronunciationDictionary", "A new dictionary from JSON rules, or from a PLS file in a multipart form", {
        required: true,
        content: { ...NEW_RULES.content, ...NEW_FORM.content },
      }),
      get: native.list,
    },
    [`${N}/{id}`]: { get: native.get },
    [`${N}/{id}/add-rules`]: native.add,
    [`${N}/{id}/remove-rules`]: native.remove,
    [`${N}/{id}/set-rules`]: native.set,
    [`${N}/{id}/{version_id}/download`]: { get: native.download },
    [`${E}/add-from-rules`]: { post: el.create("AddPronunciationDictionaryFromRules", "A new dictionary from rules (pronunciationDictionaries.createFromRules)", NEW_RULES) },
    [`${E}/add-from-file`]: { post: el.create("AddPronunciationDictionaryFromFile", "A new dictionary from a PLS file (pronunciationDictionaries.createFromFile)", NEW_FORM) },
    [E]: { get: el.list },
    [`${E}/{id}`]: { get: el.get },
    [`${E}/{id}/add-rules`]: el.add,
    [`${E}/{id}/remove-rules`]: el.remove,
    [`${E}/{id}/set-rules`]: el.set,
    [`${E}/{id}/{version_id}/download`]: { get: el.download },
  },
};
