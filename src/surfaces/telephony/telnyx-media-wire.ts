import { type MediaWire, mediaReader, stringsOf } from "./media-wire.ts";

// Telnyx media streaming, bidirectional RTP in PCMU: `connected`, `start` (top-level `stream_id`,
// `start.call_control_id`, `start.media_format`, `start.custom_parameters`), `media`
// (`media.payload`, the RTP payload without its header), `dtmf` (`dtmf.digit`), `mark`, `stop`
// and `error` come in, snake_case; `media`, `mark` and `clear` go out, without a stream id.

export const telnyxMediaWire: MediaWire = {
  read: mediaReader((frame, start) => {
    const streamId = frame.stream_id ?? start.stream_id;
    if (typeof streamId !== "string" || typeof start.call_control_id !== "string") return { invalid: "start needs a stream_id and a call_control_id" };
    return { type: "start", streamId, callId: start.call_control_id, customParameters: stringsOf(start.custom_parameters) };
  }),
  reply: () => ({
    media: (payload) => ({ event: "media", media: { payload: Buffer.from(payload).toString("base64") } }),
    mark: (name) => ({ event: "mark", mark: { name } }),
    clear: () => ({ event: "clear" }),
  }),
};
