import favicon from "swagger-ui-dist/favicon-32x32.png" with { type: "file" };
import bundle from "swagger-ui-dist/swagger-ui-bundle.js" with { type: "file" };
import stylesheet from "swagger-ui-dist/swagger-ui.css" with { type: "file" };

// The API reference for people: Swagger UI on this document, every file of it served by the
// router itself (from the swagger-ui-dist package, embedded in a compiled binary), so that it
// works with no network beyond this server.

export const REFERENCE_PATH = "/docs";

/** The page's own files, by the path it loads them from. */
export const REFERENCE_ASSETS: Record<string, string> = {
  [`${REFERENCE_PATH}/swagger-ui-bundle.js`]: bundle,
  [`${REFERENCE_PATH}/swagger-ui.css`]: stylesheet,
  [`${REFERENCE_PATH}/favicon.png`]: favicon,
};

/** The page: a bar back to the site's own pages above it; the validator badge is off (it would send the document to swagger.io). */
export const REFERENCE_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>voxroute API reference</title>
<link rel="icon" type="image/png" href="${REFERENCE_PATH}/favicon.png">
<link rel="stylesheet" href="${REFERENCE_PATH}/swagger-ui.css">
<style>
body { margin: 0; }
.site { display: flex; flex-wrap: wrap; align-items: center; gap: 0.5rem 1.5rem; padding: 0.75rem 1rem; background: #111827; font-family: system-ui, sans-serif; }
.site a { color: #ffffff; text-decoration: none; }
.site a:first-child { font-weight: 700; font-size: 1.2rem; }
.site a:focus-visible { outline: 3px solid #b45309; outline-offset: 2px; }
</style>
</head>
<body>
<nav class="site" aria-label="Site"><a href="/">voxroute</a><a href="/dashboard">Dashboard</a><a href="/playground">Playground</a></nav>
<div id="reference"></div>
<script src="${REFERENCE_PATH}/swagger-ui-bundle.js"></script>
<script>
SwaggerUIBundle({ url: "/openapi.json", dom_id: "#reference", validatorUrl: null, deepLinking: true });
</script>
</body>
</html>
`;
