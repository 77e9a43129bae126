import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openApiDocument } from "../src/openapi/document.ts";
import { startTestServer, type TestServer } from "./helpers/server.ts";

// `redocly lint` (the recommended rules, tuned in redocly.yaml where they contradict the API) on the
// document a running server serves, and on the document of the payment configurations it does not
// have: no error and no warning. Redocly runs offline; its telemetry is off.

const ROOT = new URL("..", import.meta.url).pathname;
const REDOCLY = join(ROOT, "node_modules/@redocly/cli/bin/cli.js");

interface Problem {
  ruleId: string;
  severity: "error" | "warn";
  message: string;
  location: { pointer: string }[];
}

let server: TestServer;
let dir: string;
beforeAll(async () => {
  server = await startTestServer();
  dir = mkdtempSync(join(tmpdir(), "voxroute-openapi-"));
});
afterAll(async () => {
  await server.stop(0);
  rmSync(dir, { recursive: true, force: true });
});

/** Redocly's problems with the document (its JSON report holds one document's). */
async function lint(name: string, doc: unknown): Promise<Problem[]> {
  const file = join(dir, `${name}.json`);
  writeFileSync(file, JSON.stringify(doc));
  const run = Bun.spawn([process.execPath, REDOCLY, "lint", file, "--config", join(ROOT, "redocly.yaml"), "--format", "json"], {
    cwd: ROOT,
    env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true" },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, err] = await Promise.all([new Response(run.stdout).text(), new Response(run.stderr).text(), run.exited]);
  const report = JSON.parse(out.slice(out.indexOf("{"))) as { problems?: Problem[] };
  if (!report.problems) throw new Error(`redocly gave no report: ${err}`);
  return report.problems;
}

const summary = (problems: Problem[]) => problems.map((p) => `${p.severity} ${p.ruleId} ${p.location[0]?.pointer}: ${p.message}`);

test("the served document, and those of Stripe and the sandbox, pass redocly lint with no error and no warning", async () => {
  const served = await (await fetch(`${server.url}/openapi.json`)).json();
  expect(await (await fetch(`${server.url}/swagger/json`)).json()).toEqual(served);
  for (const [name, doc] of Object.entries({ served, stripe: openApiDocument({ payments: "stripe" }), sandbox: openApiDocument({ payments: "sandbox" }) })) {
    expect({ [name]: summary(await lint(name, doc)) }).toEqual({ [name]: [] });
  }
}, 30_000);

test("the lint can fail: an operation without a success answer, and one without a summary, are errors", async () => {
  const doc = openApiDocument();
  delete (doc.paths["/v1/models"] as any).get.responses["200"];
  delete (doc.paths["/v1/providers"] as any).get.summary;
  const problems = await lint("broken", doc);
  expect(problems.filter((p) => p.severity === "error").map((p) => p.ruleId)).toEqual(expect.arrayContaining(["rule/success-or-upgrade", "operation-summary"]));
}, 30_000);
