import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { PAGE_PATHS } from "../src/surfaces/web-pages.ts";
import { startTestServer, type TestServer } from "./helpers/server.ts";

// The landing page, dashboard and playground as served: one HTML page whose scripts and styles all
// come from this server (bundled from web/ and node_modules), nothing from a CDN or a font host.

/** XML namespaces name, they are never fetched. */
const NAMESPACES = /http:\/\/www\.w3\.org\/[\w/.]+/g;

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.stop(0));

describe("web pages", () => {
  test.each([...PAGE_PATHS])("%s is the page, whose scripts and styles are this server's own", async (path) => {
    const res = await fetch(`${server.url}${path}`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toStartWith("text/html");
    const html = await res.text();
    expect(html).toContain('<div id="app"></div>');
    const assets = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!).filter((a) => !a.startsWith("data:"));
    expect(assets.some((a) => a.endsWith(".js"))).toBe(true);
    expect(assets.some((a) => a.endsWith(".css"))).toBe(true);
    for (const asset of assets) {
      expect(asset).toStartWith("/");
      expect(asset).not.toStartWith("//");
      const served = await fetch(`${server.url}${asset}`);
      expect(served.status).toBe(200);
      expect(served.headers.get("content-type")).toStartWith(asset.endsWith(".js") ? "text/javascript" : "text/css");
      expect((await served.text()).replace(NAMESPACES, "")).not.toMatch(/(https?:)?\/\/[a-z0-9-]+\.[a-z]{2,}/i);
    }
  });

  test("the script holds none of the README's developer commands: the landing page is for users of the deployment", async () => {
    const html = await (await fetch(`${server.url}/`)).text();
    const script = await (await fetch(`${server.url}${/src="([^"]+\.js)"/.exec(html)![1]}`)).text();
    const readme = await Bun.file(new URL("../README.md", import.meta.url)).text();
    const commands = [...readme.matchAll(/```sh\n(.*?)\n/g)].map((m) => m[1]!).slice(0, 2);
    expect(commands).toHaveLength(2);
    expect(commands.filter((command) => script.includes(command))).toEqual([]);
  });

  test("other paths are still the API's: an unknown one is 404 in the native envelope", async () => {
    const res = await fetch(`${server.url}/nothing-here`);
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ error: "not_found" });
  });
});
