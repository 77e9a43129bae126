import { query } from "./operation.ts";
import { array, integer, nullable, object, ref, string } from "./schema.ts";

// The keyset paging of the list endpoints (`/account/*`, realtime profiles): `limit` and the
// opaque `cursor` in, `{items, next_cursor}` out.

export const page = (item: string) => object({ items: array(ref(item)), next_cursor: nullable(string("The next page's `cursor`; `null` on the last page")) });
export const CURSOR = query("cursor", "The previous page's `next_cursor` (opaque)", string(undefined, { minLength: 1, maxLength: 512 }));
export const LIMIT = query("limit", "Items per page", integer(undefined, { minimum: 1, maximum: 100, default: 50 }));
