import { afterAll, beforeAll, expect, test } from "bun:test";
import { openApiDocument } from "../src/openapi/document.ts";
import { lint, problemLines } from "./helpers/redocly.ts";
import { startTestServer, type TestServer } from "./helpers/server.ts";

// `redocly lint` (the recommended rules, tuned in redocly.yaml where they contradict the API) on the
// OpenAPI document a running server serves, and on those of the payment configurations it does
// not have: no error and no warning.

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.stop(0));

test("the served document, and those of Stripe and the sandbox, pass redocly lint with no error and no warning", async () => {
  const served = await (await fetch(`${server.url}/openapi.json`)).json();
  expect(await (await fetch(`${server.url}/swagger/json`)).json()).toEqual(served);
  for (const [name, doc] of Object.entries({ served, stripe: openApiDocument({ payments: "stripe" }), sandbox: openApiDocument({ payments: "sandbox" }) })) {
    expect({ [name]: problemLines(await lint(doc)) }).toEqual({ [name]: [] });
  }
}, 30_000);

test("the lint can fail: an operation without a success answer, and one without a summary, are errors", async () => {
  // A copy: the document's parts are the modules' own objects, which every server of this process serves.
  const doc = structuredClone(openApiDocument());
  delete (doc.paths["/v1/models"] as any).get.responses["200"];
  delete (doc.paths["/v1/providers"] as any).get.summary;
  const problems = await lint(doc);
  expect(problems.filter((p) => p.severity === "error").map((p) => p.ruleId)).toEqual(expect.arrayContaining(["rule/success-or-upgrade", "operation-summary"]));
}, 30_000);
