// A ConversationRelay application on loopback, as builders write them for Twilio and Telnyx
// (upstreams sheet section 7), with the behaviours a router must survive, chosen by path:
// - `/echo`: answers each finished prompt with "You said: <text>" streamed as tokens, last one `last: true`;
// - `/slow`: the same, after `?delay=<ms>`;
// - `/unfinished`: the same tokens, none with `last: true` (the answer is never closed);
// - `/hangup`: the same tokens, none with `last: true`, then closes 1000 "bye" (mid-answer);
// - `/silent`: takes everything, answers nothing;
// - `/closing`: closes 1000 "goodbye" right after `setup`;
// - `/malformed`: answers each finished prompt with frames outside the vocabulary;
// - `/end`: answers a finished prompt with `end` and its handoff data;
// - `/long`: answers each finished prompt with LONG_ANSWER (seconds of speech) as tokens;
// - `/stubborn`: the same with `interruptible: false`;
// - `/long-once`: answers its first finished prompt as `/long` does, and the later ones not at all;
// - `/goodbye`: answers with "Goodbye." then `end`;
// - `/polyglot`: after `setup` asks for German speech and German transcription, then (once the
//   router answered the German transcription with `error`) for British English transcription;
//   answers each finished prompt with "Guten Tag.".
// - `/bilingual`: answers each finished prompt three times with "Guten Tag.": tagged `lang: "de-DE"`,
//   untagged, and tagged with a language no voice speaks (`tlh`);
// - `/digits`: answers each finished prompt with `sendDigits` (valid, then not) and "Done.";
// - `/configures`: after `setup` sends Twilio's mid-call `config` and `hints` messages;
// - `/keypad/<mode>`: after `setup` says "Press one for sales." with `interruptible: <mode>`;
// - `/dialer`: after `setup` asks for the digits "1234#" to be sent.
// - `/repeats`: answers each finished prompt with a holding sentence, then "Turn <n> is done.": the
//   holding sentence is new on odd turns (a new order number across all connections) and the odd
//   turn's again on even turns, so that every second answer begins with a sentence already spoken.
// Every frame received is recorded with the headers of its connection.

export interface AppConnection {
  path: string;
  headers: Record<string, string>;
  received: Record<string, unknown>[];
  closed?: { code: number; reason: string };
}

export interface FakeApp {
  url: (path: string) => string;
  port: number;
  connections: AppConnection[];
  stop(): void;
}

const MALFORMED = [
  "not json",
  '{"no":"type"}',
  '{"type":"text"}',
  '{"type":"dance"}',
  '{"type":"play","source":"http://169.254.169.254/"}',
  '{"type":"sendDigits","digits":"1; hang up"}',
  "[1,2]",
  '{"type":"text","token":"x","interruptible":"sometimes"}',
  '{"type":"end","handoffData":{"a":1}}',
  '{"type":"language"}',
  '{"type":"text","token":"ok"}',
];

export const LONG_ANSWER = "Our opening hours are from nine in the morning until six in the evening. On Saturdays we open at ten and close at four. We are closed on Sundays and on public holidays.";

/** `record: false` keeps no connections (a benchmark's long run). */
export function startFakeApp({ record = true } = {}): FakeApp {
  const connections: AppConnection[] = [];
  let orders = 0;
  const server = Bun.serve<AppConnection & { delay: number; answered: number; order: number }>({
    port: 0,
    hostname: "127.0.0.1",
    fetch(req, srv) {
      const url = new URL(req.url);
      const conn = { path: url.pathname, headers: Object.fromEntries(req.headers), received: [], delay: Number(url.searchParams.get("delay") ?? 0), answered: 0, order: 0 };
      if (srv.upgrade(req, { data: conn })) return;
      return new Response("upgrade", { status: 426 });
    },
    websocket: {
      open(ws) {
        if (record) connections.push(ws.data);
      },
      message(ws, raw) {
        const msg = JSON.parse(String(raw)) as Record<string, unknown>;
        if (record) ws.data.received.push(msg);
        const { path } = ws.data;
        if (msg.type === "setup" && path === "/closing") return ws.close(1000, "goodbye");
        if (msg.type === "setup" && path === "/dialer") return void ws.send(JSON.stringify({ type: "sendDigits", digits: "1234#" }));
        if (msg.type === "setup" && path.startsWith("/keypad/"))
          return void ws.send(JSON.stringify({ type: "text", token: "Press one for sales.", last: true, interruptible: path.slice("/keypad/".length) }));
        if (msg.type === "setup" && path === "/configures") {
          ws.send(JSON.stringify({ type: "config", interruptible: "none", partialPrompts: true }));
          return void ws.send(JSON.stringify({ type: "hints", hints: "voxroute" }));
        }
        if (path === "/polyglot") {
          if (msg.type === "setup") ws.send(JSON.stringify({ type: "language", ttsLanguage: "de-DE", transcriptionLanguage: "de-DE" }));
          if (msg.type === "error" && String(msg.description).startsWith("transcriptionLanguage de-DE")) ws.send(JSON.stringify({ type: "language", transcriptionLanguage: "en-GB" }));
          if (msg.type === "prompt" && msg.last === true) ws.send(JSON.stringify({ type: "text", token: "Guten Tag.", last: true }));
          return;
        }
        if (msg.type !== "prompt" || msg.last !== true) return;
        if (path === "/malformed") {
          for (const frame of MALFORMED) ws.send(frame);
          return;
        }
        if (path === "/bilingual") {
          for (const lang of ["de-DE", undefined, "tlh"]) ws.send(JSON.stringify({ type: "text", token: "Guten Tag.", last: true, ...(lang ? { lang } : {}) }));
          return;
        }
        if (path === "/digits") {
          ws.send(JSON.stringify({ type: "sendDigits", digits: "1234#" }));
          ws.send(JSON.stringify({ type: "sendDigits", digits: "call me" }));
          return void ws.send(JSON.stringify({ type: "text", token: "Done.", last: true }));
        }
        if (path === "/repeats") {
          const turn = ws.data.answered++;
          if (turn % 2 === 0) ws.data.order = ++orders;
          const words = `One moment, please, I am checking order ${ws.data.order}. Turn ${turn + 1} is done.`.split(/(?<= )/);
          for (const [i, token] of words.entries()) ws.send(JSON.stringify({ type: "text", token, last: i === words.length - 1 }));
          return;
        }
        if (path === "/end") return void ws.send(JSON.stringify({ type: "end", handoffData: JSON.stringify({ reason: "done", heard: msg.voicePrompt }) }));
        if (path === "/goodbye") {
          ws.send(JSON.stringify({ type: "text", token: "Goodbye.", last: true }));
          return void ws.send(JSON.stringify({ type: "end", handoffData: "bye" }));
        }
        if (path === "/long" || path === "/stubborn" || (path === "/long-once" && ws.data.answered++ === 0)) {
          const words = LONG_ANSWER.split(/(?<= )/);
          for (const [i, token] of words.entries()) ws.send(JSON.stringify({ type: "text", token, last: i === words.length - 1, interruptible: path !== "/stubborn" }));
          return;
        }
        if (!["/echo", "/slow", "/unfinished", "/hangup"].includes(path)) return;
        const tokens = ["You ", "said: ", ...String(msg.voicePrompt).split(/(?<= )/)];
        const closes = path === "/echo" || path === "/slow";
        setTimeout(() => {
          for (const [i, token] of tokens.entries()) ws.send(JSON.stringify({ type: "text", token, last: closes && i === tokens.length - 1 }));
          if (path === "/hangup") ws.close(1000, "bye");
        }, ws.data.delay);
      },
      close(ws, code, reason) {
        ws.data.closed = { code, reason };
      },
    },
  });
  const port = server.port!;
  return { url: (path) => `ws://127.0.0.1:${port}${path}`, port, connections, stop: () => server.stop(true) };
}
