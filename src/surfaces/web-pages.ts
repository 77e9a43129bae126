import page from "../../web/index.html";

// The dashboard, playground and landing page: one HTML page whose script and styles Bun bundles
// from web/ (with Preact and uPlot from node_modules), on the first request from a checkout and at
// `bun run build` into the executable, so nothing generated is committed and nothing is fetched
// from elsewhere. They are Bun.serve routes, not Elysia's: Bun answers them and their hashed
// chunks (`/chunk-….js`, immutable) itself. The page reads its view from its path.

export const PAGE_PATHS = ["/", "/dashboard", "/playground"] as const;

export const webPages = Object.fromEntries(PAGE_PATHS.map((path) => [path, page]));
