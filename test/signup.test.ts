import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { eq } from "drizzle-orm";
import { simpleParser } from "mailparser";
import { SMTPServer } from "smtp-server";
import { localSttAvailable } from "./helpers/local-stt.ts";
import { startTestServer, type TestServer } from "./helpers/server.ts";
import { tempDir } from "./helpers/temp-dirs.ts";

// Signup by e-mail code through a real SMTP server on loopback that receives and parses each mail.

interface Received {
  to: string;
  subject: string;
  text: string;
}

const inbox: Received[] = [];
let smtp: SMTPServer;
let smtpPort: number;
let server: TestServer;

beforeAll(async () => {
  smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS"],
    onData(stream, session, callback) {
      simpleParser(stream).then((mail) => {
        inbox.push({ to: session.envelope.rcptTo[0].address, subject: mail.subject ?? "", text: mail.text ?? "" });
        callback();
      }, callback);
    },
  });
  await new Promise<void>((resolve) => smtp.listen(0, "127.0.0.1", resolve));
  smtpPort = (smtp.server.address() as { port: number }).port;
  server = await startTestServer({ SMTP_URL: `smtp://127.0.0.1:${smtpPort}`, MAIL_FROM: "voxroute <codes@voxroute.test>", WELCOME_GRANT_USD: "0.5", TRUST_PROXY: "true" });
});
afterAll(async () => {
  await server.stop(0);
  await new Promise<void>((resolve) => smtp.close(resolve));
});

/**
 * Each test is its own client address, so per-client limits stay apart. It reaches the server as
 * the trusted proxy passes it on: whatever the client wrote into X-Forwarded-For (here a new
 * forged address every time), then the address the proxy saw.
 */
let clientIp = "203.0.113.1";
let nextHost = 1; // counted, not random: a repeated address would carry one test's codes into another
beforeEach(() => {
  clientIp = `203.0.113.${++nextHost}`;
});

const forged = () => `192.0.2.${Math.floor(Math.random() * 250) + 1}`;

const post = async (path: string, body: unknown, headers: Record<string, string> = {}) => {
  const res = await fetch(`${server.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-forwarded-for": `${forged()}, ${clientIp}`, ...headers },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as any, headers: res.headers };
};

async function codeFor(email: string): Promise<string> {
  for (let i = 0; i < 100; i++) {
    const mail = inbox.findLast((m) => m.to === email);
    if (mail) return /\b(\d{6})\b/.exec(mail.text)![1];
    await Bun.sleep(20);
  }
  throw new Error(`no mail reached ${email}`);
}

const unique = () => `user-${crypto.randomUUID().slice(0, 8)}@example.com`;

describe("signup by e-mail code", () => {
  test("happy path: the code arrives by SMTP; verify returns a working key and a welcome grant", async () => {
    const email = unique();
    const sent = await post("/account/agent-signup", { email });
    expect(sent).toMatchObject({ status: 200, body: { success: true, expiresIn: 300 } });
    const code = await codeFor(email);
    const mail = inbox.findLast((m) => m.to === email)!;
    expect(mail.subject).toContain(code);

    const verified = await post("/account/agent-signup/verify", { email: email.toUpperCase(), code });
    expect(verified.status).toBe(200);
    expect(verified.body).toMatchObject({ success: true, new_account: true });
    expect(verified.body.api_key).toMatch(/^vxr_/);
    expect(verified.body.key_prefix).toBe(verified.body.api_key.slice(0, 12));

    const balance = await fetch(`${server.url}/account/balance`, { headers: { Authorization: `Bearer ${verified.body.api_key}` } });
    const b = (await balance.json()) as any;
    expect(b.promotional_credits).toBe(500_000);
    const local = ["flite", "svox-pico", "espeak-ng", ...(localSttAvailable ? ["pocketsphinx"] : [])];
    expect(b.promotion_grants[0]).toMatchObject({ name: "welcome", eligible: true, targets: local.map((provider) => ({ provider, model: "*" })) });
  });

  test("the code works once", async () => {
    const email = unique();
    await post("/account/agent-signup", { email });
    const code = await codeFor(email);
    expect((await post("/account/agent-signup/verify", { email, code })).status).toBe(200);
    expect(await post("/account/agent-signup/verify", { email, code })).toMatchObject({ status: 400, body: { error: "invalid_request" } });
  });

  test("an existing account gets a new key; the old key keeps working; no second welcome grant", async () => {
    const email = unique();
    await post("/account/agent-signup", { email });
    const first = await post("/account/agent-signup/verify", { email, code: await codeFor(email) });
    inbox.length = 0;
    await post("/account/agent-signup", { email });
    const second = await post("/account/agent-signup/verify", { email, code: await codeFor(email) });
    expect(second.body).toMatchObject({ success: true, new_account: false, account_id: first.body.account_id });
    expect(second.body.api_key).not.toBe(first.body.api_key);
    for (const key of [first.body.api_key, second.body.api_key]) {
      const res = await fetch(`${server.url}/account/balance`, { headers: { Authorization: `Bearer ${key}` } });
      expect(res.status).toBe(200);
      expect(((await res.json()) as any).promotion_grants.length).toBe(1);
    }
  });

  test("an expired code is refused; the flow restarts with a new code", async () => {
    const email = unique();
    await post("/account/agent-signup", { email });
    const code = await codeFor(email);
    const { schema } = server.ctx.database;
    await server.ctx.database.transaction((tx) =>
      tx
        .update(schema.emailCodes)
        .set({ expiresAt: new Date(Date.now() - 1) })
        .where(eq(schema.emailCodes.email, email)),
    );
    expect(await post("/account/agent-signup/verify", { email, code })).toMatchObject({ status: 400, body: { error: "invalid_request" } });
    inbox.length = 0;
    await post("/account/agent-signup", { email });
    expect((await post("/account/agent-signup/verify", { email, code: await codeFor(email) })).status).toBe(200);
  });

  test("wrong codes: after five the code is void, even the right one no longer works", async () => {
    const email = unique();
    await post("/account/agent-signup", { email });
    const code = await codeFor(email);
    const wrong = code === "000000" ? "111111" : "000000";
    for (let i = 0; i < 4; i++) expect((await post("/account/agent-signup/verify", { email, code: wrong })).body.message).toContain("not right");
    expect((await post("/account/agent-signup/verify", { email, code: wrong })).body.message).toContain("void");
    expect((await post("/account/agent-signup/verify", { email, code })).status).toBe(400);
  });

  test("a new code replaces the previous one", async () => {
    const email = unique();
    await post("/account/agent-signup", { email });
    const old = await codeFor(email);
    const another = async () => {
      inbox.length = 0;
      await post("/account/agent-signup", { email });
      return codeFor(email);
    };
    // Codes are drawn at random: should the new one repeat the old (one time in a million), a third is asked for.
    let fresh = await another();
    if (fresh === old) fresh = await another();
    expect(fresh).not.toBe(old);
    expect((await post("/account/agent-signup/verify", { email, code: old })).status).toBe(400);
    expect((await post("/account/agent-signup/verify", { email, code: fresh })).status).toBe(200);
  });

  test("rate limits: codes per address, then per client address (429 with Retry-After)", async () => {
    const email = unique();
    for (let i = 0; i < 3; i++) expect((await post("/account/agent-signup", { email })).status).toBe(200);
    const limited = await post("/account/agent-signup", { email });
    expect(limited).toMatchObject({ status: 429, body: { error: "invalid_request" } });
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);

    // Ten codes per client address per window (the three above count): the eighth new address is
    // refused, though each request forged a new leftmost X-Forwarded-For entry.
    for (let i = 0; i < 7; i++) expect((await post("/account/agent-signup", { email: unique() })).status).toBe(200);
    expect((await post("/account/agent-signup", { email: unique() })).status).toBe(429);
    // Another client is not affected.
    clientIp = "198.51.100.7";
    expect((await post("/account/agent-signup", { email: unique() })).status).toBe(200);
  });

  test("bad bodies are 400 invalid_request", async () => {
    expect((await post("/account/agent-signup", { email: "not-an-address" })).body).toMatchObject({ error: "invalid_request", param: "email" });
    expect((await post("/account/agent-signup", { mail: "x@y.z" })).status).toBe(400);
    expect((await post("/account/agent-signup", ["x@y.z"])).status).toBe(400);
    expect((await post("/account/agent-signup/verify", { email: "x@y.z", code: "12345" })).body).toMatchObject({ error: "invalid_request", param: "code" });
    expect((await post("/account/agent-signup/verify", { email: "x@y.z", code: 123456 })).status).toBe(400);
    const res = await fetch(`${server.url}/account/agent-signup`, { method: "POST", headers: { "content-type": "application/json" }, body: "{nope" });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: "invalid_request" });
  });

  test("codes are stored only as keyed hashes", async () => {
    const email = unique();
    await post("/account/agent-signup", { email });
    const code = await codeFor(email);
    const { db, schema } = server.ctx.database;
    const rows = await db.select().from(schema.emailCodes).where(eq(schema.emailCodes.email, email));
    expect(JSON.stringify(rows)).not.toContain(code);
  });
});

describe("without SMTP: the dev outbox", () => {
  test("the code is written to the outbox directory (and the log)", async () => {
    const outbox = tempDir("outbox-");
    const dev = await startTestServer({ DEV_OUTBOX_DIR: outbox });
    try {
      const email = unique();
      const res = await fetch(`${dev.url}/account/agent-signup`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ email }) });
      expect(res.status).toBe(200);
      const [file] = readdirSync(outbox);
      const message = readFileSync(join(outbox, file), "utf8");
      expect(message).toContain(`To: ${email}`);
      const code = /code is (\d{6})/.exec(message)![1];
      const verify = await fetch(`${dev.url}/account/agent-signup/verify`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ email, code }) });
      expect(verify.status).toBe(200);
    } finally {
      await dev.stop(0);
    }
  });
});
