import { Conversation, type SessionConnectionError, type VoiceConversation } from "@elevenlabs/client";

// The page of the browser test (test/el-conversation-browser.test.ts), bundled by Bun.build when
// the test starts: ElevenLabs' own browser SDK used as a web app uses it, microphone and speaker
// included. Each conversation records what the SDK reports in `window.conversations[i]`.

export interface Recorded {
  connected?: string;
  /**
   * The formats the SDK took from conversation_initiation_metadata (its connection's, internal:
   * onConversationMetadata does not fire for the metadata that answers the handshake).
   */
  formats?: { input: { format: string; sampleRate: number }; output: { format: string; sampleRate: number } };
  disconnected?: { reason: string; closeCode?: number; closeReason?: string };
  /** startSession rejected (the SDK's SessionConnectionError). */
  failed?: { name: string; message: string; closeCode?: number; closeReason?: string };
  /** onMessage: the agent's answers ("ai") and the caller's transcripts ("user"). */
  messages: { source: string; message: string; event_id?: number }[];
  modes: string[];
  /**
   * The loudest output the SDK's own analyser (after its player) measured while the SDK said
   * "speaking", by the event_id of the audio that had come last.
   */
  outputPeaks: Record<number, number>;
  interruptions: number[];
  corrections: { original_agent_response: string; corrected_agent_response: string; event_id?: number }[];
  /** Server frames as they came, but pings: "audio 2", "interruption 2", … (a run of audio once). */
  incoming: string[];
  /** Bytes of audio received per event_id. */
  audioBytes: Record<number, number>;
  /** Bytes of each user_audio_chunk the SDK sent from the microphone. */
  chunkBytes: number[];
  pongs: number;
  errors: string[];
}

const page = globalThis as unknown as { conversations: Recorded[]; converse(signedUrl: string, firstMessage: string): number; end(i: number): Promise<void> };
const sessions: VoiceConversation[] = [];
page.conversations = [];

page.converse = (signedUrl, firstMessage) => {
  const rec: Recorded = { messages: [], modes: [], outputPeaks: {}, interruptions: [], corrections: [], incoming: [], audioBytes: {}, chunkBytes: [], pongs: 0, errors: [] };
  const i = page.conversations.push(rec) - 1;
  let lastAudio: number | undefined;
  Conversation.startSession({
    signedUrl,
    connectionType: "websocket",
    overrides: { agent: { firstMessage } },
    onConnect: ({ conversationId }) => (rec.connected = conversationId),
    onDisconnect: (details) => (rec.disconnected = details.reason === "user" ? { reason: "user" } : { reason: details.reason, closeCode: details.closeCode, closeReason: details.closeReason }),
    onMessage: ({ source, message, event_id }) => rec.messages.push({ source, message, event_id }),
    onModeChange: ({ mode }) => void rec.modes.push(mode),
    onInterruption: ({ event_id }) => rec.interruptions.push(event_id),
    onAgentResponseCorrection: (correction) => rec.corrections.push(correction),
    onError: (message) => rec.errors.push(message),
    onIncomingEvent: (event) => {
      if (event.type === "ping") return;
      const id = event.type === "audio" ? event.audio_event.event_id : event.type === "interruption" ? event.interruption_event.event_id : undefined;
      const entry = id === undefined ? event.type : `${event.type} ${id}`;
      if (event.type !== "audio" || rec.incoming.at(-1) !== entry) rec.incoming.push(entry);
      if (event.type !== "audio") return;
      const audioId = event.audio_event.event_id;
      rec.audioBytes[audioId] = (rec.audioBytes[audioId] ?? 0) + atob(event.audio_event.audio_base_64).length;
      lastAudio = audioId;
    },
    onOutgoingEvent: (event) => {
      if ("user_audio_chunk" in event) rec.chunkBytes.push(atob(String(event.user_audio_chunk)).length);
      else if ("type" in event && event.type === "pong") rec.pongs++;
    },
  }).then(
    (session) => {
      sessions[i] = session as VoiceConversation;
      const connection = (session as unknown as { connection: { inputFormat: { format: string; sampleRate: number }; outputFormat: { format: string; sampleRate: number } } }).connection;
      rec.formats = { input: connection.inputFormat, output: connection.outputFormat };
      const sample = setInterval(() => {
        if (rec.disconnected) return clearInterval(sample);
        if (lastAudio !== undefined && rec.modes.at(-1) === "speaking") rec.outputPeaks[lastAudio] = Math.max(rec.outputPeaks[lastAudio] ?? 0, session.getOutputVolume());
      }, 10);
    },
    (err: SessionConnectionError) => (rec.failed = { name: err.name, message: err.message, closeCode: err.closeCode, closeReason: err.closeReason }),
  );
  return i;
};

page.end = async (i) => {
  await sessions[i]?.endSession();
};
