import { type MediaWire, mediaReader, stringsOf } from "./media-wire.ts";

// Twilio Media Streams, bidirectional (`<Connect><Stream>`): `connected`, `start` (`streamSid`,
// `start.callSid`, `start.customParameters`, `start.mediaFormat` µ-law 8 kHz mono), `media`
// (`media.payload`), `dtmf` (`dtmf.digit`), `mark` (`mark.name`) and `stop` come in, camelCase;
// `media`, `mark` and `clear` go out, each with the `streamSid`.

export const twilioMediaWire: MediaWire = {
  read: mediaReader((frame, start) => {
    const streamId = start.streamSid ?? frame.streamSid;
    if (typeof streamId !== "string" || typeof start.callSid !== "string") return { invalid: "start needs a streamSid and a callSid" };
    return { type: "start", streamId, callId: start.callSid, customParameters: stringsOf(start.customParameters) };
  }),
  reply: (streamSid) => ({
    media: (payload) => ({ event: "media", streamSid, media: { payload: Buffer.from(payload).toString("base64") } }),
    mark: (name) => ({ event: "mark", streamSid, mark: { name } }),
    clear: () => ({ event: "clear", streamSid }),
  }),
};
