import { afterAll, expect, test } from "bun:test";
import { ProviderError } from "../src/errors.ts";
import { upstreamFetch } from "../src/providers/upstream-http.ts";

// upstreamFetch on a session's signal: the signal outlives many requests (one per utterance), so a
// request must leave nothing on it, and aborting it must still stop a body being read.

const server = Bun.serve({
  port: 0,
  fetch(req) {
    if (new URL(req.url).pathname === "/slow") {
      return new Response(
        new ReadableStream({
          async pull(c) {
            c.enqueue(new Uint8Array(100));
            await Bun.sleep(50);
          },
        }),
      );
    }
    if (new URL(req.url).pathname === "/hang") return new Promise<Response>(() => {});
    return new Response(new Uint8Array(1000));
  },
});
afterAll(() => server.stop(true));
const url = (path: string) => `http://127.0.0.1:${server.port}${path}`;

/** Reads a body on: "failed" when a read throws, "ended" at its end. */
async function readToTheEnd(reader: { read(): Promise<{ done?: boolean }> }): Promise<"failed" | "ended"> {
  try {
    while (!(await reader.read()).done);
    return "ended";
  } catch {
    return "failed";
  }
}

/** A session's signal that counts the listeners left on it. */
function countedSignal() {
  const controller = new AbortController();
  let listeners = 0;
  const { signal } = controller;
  const add = signal.addEventListener.bind(signal);
  const remove = signal.removeEventListener.bind(signal);
  signal.addEventListener = ((...args: Parameters<typeof add>) => {
    listeners++;
    add(...args);
  }) as typeof add;
  signal.removeEventListener = ((...args: Parameters<typeof remove>) => {
    listeners--;
    remove(...args);
  }) as typeof remove;
  return { controller, signal, listeners: () => listeners };
}

test("a hundred requests on one session's signal leave no listener on it", async () => {
  const session = countedSignal();
  for (let i = 0; i < 100; i++) {
    const res = await upstreamFetch("fake", url("/"), { signal: session.signal }, 5000);
    expect((await res.arrayBuffer()).byteLength).toBe(1000);
  }
  expect(session.listeners()).toBe(0);
});

test("aborting the session's signal still stops a body being read, as a cancellation", async () => {
  const session = countedSignal();
  const res = await upstreamFetch("fake", url("/slow"), { signal: session.signal }, 5000);
  const reader = res.body!.getReader();
  await reader.read();
  session.controller.abort();
  expect(await readToTheEnd(reader)).toBe("failed");
});

test("an upstream that does not answer in time is a retryable ProviderError; a cancelled request is not retryable", async () => {
  const late = await upstreamFetch("fake", url("/hang"), {}, 100).catch((e) => e);
  expect(late).toBeInstanceOf(ProviderError);
  expect(late).toMatchObject({ retryable: true, message: "fake did not answer within 100 ms" });
  const session = new AbortController();
  const pending = upstreamFetch("fake", url("/hang"), { signal: session.signal }, 5000).catch((e) => e);
  session.abort();
  expect(await pending).toMatchObject({ retryable: false, message: "fake request cancelled" });
});

test("with a controller of the request's own: the timeout aborts it as a retryable ProviderError, the caller's abort is a cancellation, and its abort still stops the body", async () => {
  const own = new AbortController();
  const late = await upstreamFetch("fake", url("/hang"), {}, 100, own).catch((e) => e);
  expect(late).toMatchObject({ retryable: true, message: "fake did not answer within 100 ms" });
  expect(own.signal.reason).toBe(late);

  const cancelled = new AbortController();
  const pending = upstreamFetch("fake", url("/hang"), {}, 5000, cancelled).catch((e) => e);
  cancelled.abort();
  expect(await pending).toMatchObject({ retryable: false, message: "fake request cancelled" });

  const reading = new AbortController();
  const res = await upstreamFetch("fake", url("/slow"), {}, 100, reading);
  const reader = res.body!.getReader();
  await reader.read();
  await Bun.sleep(200); // past the connect timeout: answered in time, the request is not aborted by it
  expect(reading.signal.aborted).toBe(false);
  reading.abort();
  expect(await readToTheEnd(reader)).toBe("failed");
});
