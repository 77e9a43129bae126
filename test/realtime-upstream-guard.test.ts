import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, type TestServer } from "./helpers/server.ts";
import { resolveUpstream, UpstreamRefused, type Resolver } from "../src/realtime/upstream-guard.ts";
import { APP_TEST_TLS, serveNamedTls } from "./fakes/named-tls.ts";

// The SSRF guard of the application socket: non-public literal hosts (in every spelling URL
// parsers accept) are refused without a DNS query, names are refused when any answer is
// non-public, and the checked address is the one to connect to. Over HTTP: profiles with such
// hosts are refused at creation unless REALTIME_ALLOW_PRIVATE_UPSTREAMS=true.

const REFUSED = [
  "ws://127.0.0.1/",
  "ws://127.1/",
  "ws://2130706433/",
  "ws://0x7f.1/",
  "ws://0x7f000001/",
  "ws://0177.0.0.1/",
  "ws://127.0.0.1./",
  "ws://127.255.255.254:9000/app",
  "ws://[::1]/",
  "ws://[::ffff:127.0.0.1]/",
  "ws://[0:0:0:0:0:ffff:7f00:1]/",
  "ws://[::ffff:10.0.0.1]/",
  "ws://[::127.0.0.1]/",
  "ws://[64:ff9b::169.254.169.254]/",
  "ws://[::]/",
  "ws://0.0.0.0/",
  "ws://0/",
  "ws://10.1.2.3/",
  "ws://172.16.0.1/",
  "ws://172.31.255.255/",
  "ws://192.168.1.1/",
  "wss://169.254.169.254/latest/meta-data",
  "ws://[fe80::1]/",
  "ws://[febf::1]/",
  "ws://[fc00::1]/",
  "ws://[fd12:3456::1]/",
  "ws://100.64.0.1/",
  "ws://100.127.255.255/",
  "ws://224.0.0.1/",
  "ws://239.255.255.250/",
  "ws://[ff02::1]/",
  "ws://255.255.255.255/",
  "ws://localhost/",
  "ws://localhost./",
  "ws://LOCALHOST:8080/",
  "ws://%6c%6fcalhost/",
  "wss://app.localhost/",
  "wss://user:pass@app.example/",
  "wss://app.example@127.0.0.1/",
  "wss://:secret@app.example/",
];

const PUBLIC = [
  "wss://app.example/voice",
  "ws://8.8.8.8/",
  "ws://172.32.0.1/",
  "ws://100.128.0.1/",
  "ws://192.169.0.1/",
  "ws://11.0.0.1/",
  "ws://[2606:4700::1111]/",
  "ws://[::ffff:8.8.8.8]/",
  "ws://[64:ff9b::808:808]/",
  "wss://app.example.:8443/x?y=1",
];

/** A resolver that answers from a table and fails the test if a literal host reaches it. */
function resolver(table: Record<string, string[]>): Resolver & { asked: string[] } {
  const asked: string[] = [];
  const resolve = async (hostname: string) => {
    asked.push(hostname);
    const answers = table[hostname];
    if (!answers) throw Object.assign(new Error(`ENOTFOUND ${hostname}`), { code: "ENOTFOUND" });
    return answers.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
  };
  return Object.assign(resolve, { asked });
}

const refusal = (url: string, allow: boolean, resolve: Resolver) =>
  resolveUpstream(url, allow, resolve).then(
    () => undefined,
    (e: Error) => (e instanceof UpstreamRefused ? e.message : `not a refusal: ${e}`),
  );

describe("resolveUpstream", () => {
  test.each(REFUSED)("%s is refused without a DNS query", async (url) => {
    const resolve = resolver({});
    expect(await refusal(url, false, resolve)).toMatch(
      /^the application URL (names a loopback host|is a (loopback|private|link-local|CGNAT|multicast|unspecified|reserved) address|must not carry credentials)/,
    );
    expect(resolve.asked).toEqual([]);
  });

  test.each(PUBLIC)("%s is allowed", async (url) => {
    const resolve = resolver({ "app.example": ["93.184.215.14"], "app.example.": ["93.184.215.14"] });
    expect(await refusal(url, false, resolve)).toBeUndefined();
  });

  test("a name is refused when any of its addresses is non-public, however it is spelled", async () => {
    const resolve = resolver({
      "rebind.example": ["127.0.0.1"],
      "mixed.example": ["93.184.215.14", "10.0.0.7"],
      "mapped.example": ["2606:4700::1", "::ffff:192.168.0.1"],
      "v6.example": ["::1"],
      "cgnat.example.": ["100.100.100.100"],
    });
    expect(await refusal("wss://rebind.example/", false, resolve)).toBe("the application host rebind.example resolves to a loopback address");
    expect(await refusal("wss://mixed.example/", false, resolve)).toBe("the application host mixed.example resolves to a private address");
    expect(await refusal("wss://mapped.example/", false, resolve)).toBe("the application host mapped.example resolves to a private address");
    expect(await refusal("wss://v6.example/", false, resolve)).toBe("the application host v6.example resolves to a loopback address");
    expect(await refusal("wss://cgnat.example./", false, resolve)).toBe("the application host cgnat.example. resolves to a CGNAT address");
    expect(await refusal("wss://nowhere.example/", false, resolve)).toBe("the application host nowhere.example does not resolve");
    expect(await refusal("https://app.example/", true, resolve)).toBe("the application URL must be a ws:// or wss:// URL");
    expect(await refusal("not a url", true, resolve)).toBe("the application URL is not a URL");
  });

  test("the checked address is the one to connect to, with the original Host and TLS name", async () => {
    const resolve = resolver({ "app.example": ["93.184.215.14", "2606:2800::1"], "v6only.example": ["2606:2800::1"] });
    expect(await resolveUpstream("wss://app.example:8443/voice?x=1", false, resolve)).toEqual({
      connectUrl: "wss://93.184.215.14:8443/voice?x=1",
      address: "93.184.215.14",
      family: 4,
      host: "app.example:8443",
      servername: "app.example",
    });
    expect(await resolveUpstream("wss://v6only.example/voice", false, resolve)).toEqual({
      connectUrl: "wss://[2606:2800::1]/voice",
      address: "2606:2800::1",
      family: 6,
      host: "v6only.example",
      servername: "v6only.example",
    });
    expect(await resolveUpstream("ws://8.8.8.8:81/", false, resolve)).toEqual({ connectUrl: "ws://8.8.8.8:81/", address: "8.8.8.8", family: 4, host: "8.8.8.8:81" });
  });

  test("with private upstreams allowed, every such URL resolves, and the socket reaches the checked address with the original Host", async () => {
    for (const url of REFUSED.filter((u) => !new URL(u).hostname.includes("localhost") && !u.includes("@"))) expect(await refusal(url, true, resolver({}))).toBeUndefined();
    const seen: { host?: string | null } = {};
    const app = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      fetch(req, srv) {
        seen.host = req.headers.get("host");
        return srv.upgrade(req) ? undefined : new Response("no", { status: 400 });
      },
      websocket: { open: (ws) => ws.close(1000, "hello"), message() {} },
    });
    try {
      const target = await resolveUpstream(`ws://app.internal:${app.port}/voice`, true, resolver({ "app.internal": ["127.0.0.1"] }));
      expect(target.connectUrl).toBe(`ws://127.0.0.1:${app.port}/voice`);
      const ws = new WebSocket(target.connectUrl, { headers: { Host: target.host } } as never);
      const closed = await new Promise<string>((resolve) => (ws.onclose = (e) => resolve(e.reason)));
      expect(closed).toBe("hello");
      expect(seen.host).toBe(`app.internal:${app.port}`);
    } finally {
      app.stop(true);
    }
  });

  test("wss: the checked address is reached with the original name for TLS, whose certificate is checked against it", async () => {
    const app = serveNamedTls("hello");
    const open = (url: string, init: object) =>
      new Promise<string>((resolve) => {
        const ws = new WebSocket(url, init as never);
        ws.onclose = (e) => resolve(`closed ${e.code} ${e.reason}`);
        ws.onerror = () => resolve("failed");
      });
    try {
      const target = await resolveUpstream(`wss://${APP_TEST_TLS.name}:${app.port}/voice`, true, resolver({ [APP_TEST_TLS.name]: ["127.0.0.1"] }));
      expect(target).toMatchObject({ connectUrl: `wss://127.0.0.1:${app.port}/voice`, servername: APP_TEST_TLS.name });
      expect(await open(target.connectUrl, { headers: { Host: target.host }, tls: { ca: APP_TEST_TLS.cert, servername: target.servername } })).toBe("closed 1000 hello");
      // Without the server name the certificate does not match the address: the name is what makes it work.
      expect(await open(target.connectUrl, { headers: { Host: target.host }, tls: { ca: APP_TEST_TLS.cert } })).toBe("failed");
    } finally {
      app.stop(true);
    }
  });

  test("the system resolver: localhost resolves to loopback and is refused; allowed, it is pinned", async () => {
    expect(await refusal("ws://localhost:1/", false, undefined as never)).toBe("the application URL names a loopback host");
    const target = await resolveUpstream("ws://localhost:1/", true);
    expect(["127.0.0.1", "::1"]).toContain(target.address);
  });
});

describe("profiles refuse literal non-public application hosts", () => {
  let strict: TestServer;
  let lenient: TestServer;
  beforeAll(async () => {
    [strict, lenient] = await Promise.all([startTestServer({ REALTIME_ALLOW_PRIVATE_UPSTREAMS: "false" }), startTestServer({ REALTIME_ALLOW_PRIVATE_UPSTREAMS: "true" })]);
  });
  afterAll(async () => {
    await Promise.all([strict.stop(0), lenient.stop(0)]);
  });
  const create = async (server: TestServer, url: string) => {
    const pipeline = { stt: { model: "pocketsphinx" }, tts: { model: "flite" }, upstream: { url } };
    const res = await fetch(`${server.url}/v1/realtime/profiles`, { method: "POST", headers: { authorization: `Bearer ${server.key}` }, body: JSON.stringify({ name: "guarded", pipeline }) });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  test("400 invalid_request on pipeline.upstream.url by default; stored when the operator allows private upstreams", async () => {
    for (const url of REFUSED) {
      expect({ url, ...(await create(strict, url)) }).toMatchObject({ url, status: 400, body: { error: "invalid_request", param: "pipeline.upstream.url" } });
      expect({ url, status: (await create(lenient, url)).status }).toEqual({ url, status: 201 });
    }
    // Names are judged when the socket opens, not here: a name is stored whatever it resolves to today.
    expect((await create(strict, "wss://app.example/voice")).status).toBe(201);
    expect((await create(strict, "ws://8.8.8.8/")).status).toBe(201);
    expect(await create(lenient, "https://127.0.0.1/")).toMatchObject({ status: 400, body: { param: "pipeline.upstream.url" } });
  });

  test("the same rule on /el Speech Engines", async () => {
    const res = await fetch(`${strict.url}/el/v1/speech-engine`, {
      method: "POST",
      headers: { "xi-api-key": strict.key },
      body: JSON.stringify({ name: "x", speech_engine: { ws_url: "ws://[::ffff:127.0.0.1]:9/" }, service: { stt: { model_id: "pocketsphinx" }, tts: { model_id: "flite" } } }),
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ detail: { status: "invalid_request", param: "speech_engine.ws_url" } });
  });
});

test("the setting is off unless the operator turns it on", async () => {
  const { loadConfig } = await import("../src/config.ts");
  expect(loadConfig({}).realtime.allowPrivateUpstreams).toBe(false);
  expect(loadConfig({ REALTIME_ALLOW_PRIVATE_UPSTREAMS: "true" }).realtime.allowPrivateUpstreams).toBe(true);
});
