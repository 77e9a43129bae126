import { afterAll, describe, expect, test } from "bun:test";
import { createApp } from "../src/app.ts";
import { sockets } from "../src/surfaces/sockets.ts";
import { REFERENCE_ASSETS, REFERENCE_PATH } from "../src/openapi/reference-page.ts";
import { startTestServer, type TestServer } from "./helpers/server.ts";

// The OpenAPI document stays true to the app: every route of the app is documented with its
// method and path, every documented operation is a route of the app, and every documented path is
// routed (answers something other than the router's own 404). For each payment configuration,
// since the payment paths exist only with their provider.

interface DocumentedOperation {
  "x-websocket"?: unknown;
}
type Document = { paths: Record<string, Record<string, DocumentedOperation>> };

/** The reference page and its files: pages for people, not API. Catch-alls (`/el/*`, `/oai/*`) answer 501 for what is not implemented. */
const NOT_API = new Set([REFERENCE_PATH, "/swagger", ...Object.keys(REFERENCE_ASSETS)]);
const isCatchAll = (method: string, path: string) => method === "ALL" && path.endsWith("/*");

/** A path template with its parameters unnamed: Elysia's `:name` and trailing `*`, OpenAPI's `{name}`. */
const shape = (path: string) =>
  path
    .replace(/:[^/]+/g, "{}")
    .replace(/\/\*$/, "/{}")
    .replace(/\{[^}]+\}/g, "{}");

/** `GET /v1/tts`, or `WS /v1/tts` for a WebSocket handshake, as the document lists them. */
function documented(doc: Document): Set<string> {
  const ops = new Set<string>();
  for (const [path, item] of Object.entries(doc.paths)) for (const [method, op] of Object.entries(item)) ops.add(`${op["x-websocket"] ? "WS" : method.toUpperCase()} ${shape(path)}`);
  return ops;
}

/** The app's routes and its WebSocket channels (served ahead of it), as the same strings; a channel's plain GET (its 426) is part of its handshake. */
function routed(server: TestServer): Set<string> {
  const channels = sockets(server.ctx).map((s) => ({ method: "WS", path: s.path }));
  const routes = [...createApp(server.ctx).routes, ...channels].filter((r) => !isCatchAll(r.method, r.path) && !NOT_API.has(r.path));
  const socketPaths = new Set(channels.map((r) => shape(r.path)));
  return new Set(routes.filter((r) => !(r.method === "GET" && socketPaths.has(shape(r.path)))).map((r) => `${r.method} ${shape(r.path)}`));
}

/** A concrete path of a template, each parameter given a value. */
const concrete = (template: string) => template.replace(/\{[^}]+\}/g, "x");

const CONFIGURATIONS: Record<string, Record<string, string>> = {
  "no payments": {},
  "the sandbox": { SANDBOX_PAYMENTS: "true" },
  Stripe: { STRIPE_SECRET_KEY: "sk_test_x", STRIPE_WEBHOOK_SECRET: "whsec_x", STRIPE_API_URL: "http://127.0.0.1:9" },
};

const servers: TestServer[] = [];
afterAll(() => Promise.all(servers.map((s) => s.stop(0))));

for (const [name, env] of Object.entries(CONFIGURATIONS)) {
  describe(`the document and the app's routes, with ${name}`, () => {
    let server: TestServer;
    let doc: Document;
    test("every route is documented, and every documented operation is a route", async () => {
      server = await startTestServer(env);
      servers.push(server);
      doc = (await (await fetch(`${server.url}/openapi.json`)).json()) as Document;
      const app = routed(server);
      const listed = documented(doc);
      expect([...app].filter((r) => !listed.has(r))).toEqual([]);
      expect([...listed].filter((op) => !app.has(op))).toEqual([]);
      expect(app.size).toBeGreaterThan(40);
    });

    test("every documented path is routed: none answers the router's own 404", async () => {
      const unrouted: string[] = [];
      for (const [template, item] of Object.entries(doc.paths)) {
        for (const method of Object.keys(item)) {
          const res = await fetch(`${server.url}${concrete(template)}`, { method: method.toUpperCase(), redirect: "manual" });
          const body = await res.text();
          if (res.status === 404 && body.includes("no such endpoint")) unrouted.push(`${method} ${template}`);
        }
      }
      expect(unrouted).toEqual([]);
    });
  });
}

test("path templates compare alike: Elysia's `:name` and trailing `*` against OpenAPI's `{name}`", () => {
  expect(shape("/v1/custom-voices/*")).toBe(shape("/v1/custom-voices/{voice_id}"));
  expect(shape("/el/v1/text-to-speech/:voice_id/stream")).toBe(shape("/el/v1/text-to-speech/{voice_id}/stream"));
  expect(shape("/el/v1/text-to-speech/:voice_id/stream")).not.toBe(shape("/el/v1/text-to-speech/{voice_id}"));
  expect(documented({ paths: { "/v1/tts": { get: { "x-websocket": {} } }, "/v1/models": { get: {} } } })).toEqual(new Set(["WS /v1/tts", "GET /v1/models"]));
});
