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

/** The page: the validator badge is off (it would send the document to swagger.io). */
export const REFERENCE_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>voxroute API reference</title>
<link rel="icon" type="image/png" href="${REFERENCE_PATH}/favicon.png">
<link rel="stylesheet" href="${REFERENCE_PATH}/swagger-ui.css">
</head>
<body>
<div id="reference"></div>
<script src="${REFERENCE_PATH}/swagger-ui-bundle.js"></script>
<script>
SwaggerUIBundle({ url: "/openapi.json", dom_id: "#reference", validatorUrl: null, deepLinking: true });
</script>
</body>
</html>
`;
