import { describe, expect, test } from "bun:test";
import { openUpstreamStreams } from "../../src/providers/upstream-ws.ts";
import { fundedAccount, lastActivity } from "./accounts.ts";
import type { TestServer } from "./server.ts";
import { bearer, connect } from "./ws-client.ts";

/** The faults every streaming STT fake can play. */
type SharedFault = "401" | "429" | "500" | "drop" | "malformed";
const SHARED: [SharedFault, string][] = [
  ["401", "handshake refused"],
  ["429", "handshake rate limited"],
  ["500", "handshake server error"],
  ["drop", "dropped mid-stream"],
  ["malformed", "a non-JSON frame"],
];

export interface SttFaultTarget<F extends string> {
  server: () => TestServer;
  fake: () => { fault(f: SharedFault | F): void; openSockets(): number };
  /** The /v1/stt query that routes to the adapter under test, and nothing else. */
  query: string;
  /** The provider id the failed session is recorded under. */
  provider: string;
  /** The adapter's own faults, run after the shared ones. */
  faults: [NoInfer<F>, string][];
  /** The frames sent before `stt.session.close`; three seconds of 16 kHz silence unless given. */
  audio?: () => Uint8Array[];
  /** The `stt.error` message expected for particular faults. */
  messages?: Partial<Record<SharedFault | NoInfer<F>, string>>;
}

/**
 * The faults every streaming STT adapter must survive without a fallback: the session ends with
 * `stt.error` and 1011 upstream_error, no final was delivered, nothing is billed, and no upstream
 * socket or stream (with its timers) outlives it.
 */
export function describeSttFaults<F extends string>(name: string, { server, fake, query, provider, faults, audio, messages }: SttFaultTarget<F>): void {
  describe(`${name} faults`, () => {
    for (const [fault, what] of [...SHARED, ...faults]) {
      test(`${what}: stt.error, then 1011 upstream_error; nothing billed; no socket left open`, async () => {
        const { key, tenantId } = await fundedAccount(server());
        fake().fault(fault);
        const c = connect(server().wsUrl(`/v1/stt?${query}`), bearer(key));
        await c.opened;
        for (const frame of audio?.() ?? Array.from({ length: 3 }, () => new Uint8Array(32_000))) c.ws.send(frame);
        c.send({ type: "stt.session.close" });
        const rec = await c.closed;
        expect(rec.close).toEqual({ code: 1011, reason: "upstream_error" });
        const message = messages?.[fault];
        expect(rec.events.at(-1)).toMatchObject({ type: "stt.error", code: "upstream_error", ...(message && { message }) });
        expect(rec.events.some((e) => e.type === "stt.transcript.final")).toBe(false);
        expect(await lastActivity(server(), tenantId)).toMatchObject({ provider, status: "failed", credits: 0 });
        for (let i = 0; i < 100 && (fake().openSockets() > 0 || openUpstreamStreams() > 0); i++) await Bun.sleep(20);
        expect(fake().openSockets()).toBe(0);
        expect(openUpstreamStreams()).toBe(0); // and with them their liveness and keep-alive timers
      });
    }
  });
}
