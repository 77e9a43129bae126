import type { ServerWebSocket } from "bun";
import { type AudioClock, mp3Clock, sampleClock } from "../../audio/audio-clock.ts";
import { base64Of } from "../../audio/bytes.ts";
import { PcmDelivery, type PcmPromise } from "../../audio/pcm-delivery.ts";
import { type ApiError, CLOSE, closeReason, ERRORS, type ErrorCode } from "../../errors.ts";
import type { AudioFormat } from "../../providers/types.ts";
import type { TtsPort, TtsSessionEvent } from "../../sessions/tts-events.ts";
import type { PcmEncoder } from "../http-tts-port.ts";
import { WsPort } from "../ws-port.ts";
import type { FrameAligner } from "./stream-input-alignment.ts";

/** ElevenLabs calls a client frame it cannot read `invalid_input_message` and closes with 1008, where /v1/tts says 1003. */
const BAD_FRAME = { error: "invalid_input_message", close: CLOSE.policyViolation };

/**
 * A TTS session spoken as ElevenLabs' `stream-input`: audio as `{"audio": <base64>, …}` frames
 * (PCM converted to the rate and encoding `output_format` promised, then encoded chunk by chunk
 * when it names MP3 or Opus made here), `{"isFinal": true}` before the normal close (after the
 * encoder's last frames), and ElevenLabs' error frame `{message, error, code}` before any other
 * close. The session's own events (provider status, readiness, flush acknowledgements) have no
 * counterpart. With `sync_alignment=true` each audio frame carries its characters' timings (a
 * frame lasts as long as the audio that went into it: the PCM encoded into it, or the providers'
 * own MP3 frames); characters timed after the last audio go in a frame of no audio before `isFinal`.
 */
export class StreamInputPort implements TtsPort {
  private readonly socket: WsPort;
  private delivery: PcmDelivery | undefined;
  private encoder: PcmEncoder | undefined;
  private disposed = false;
  /** With an aligner: the length of the audio delivered so far, and where the next frame starts. */
  private clock: AudioClock | undefined;
  private delivered = 0;
  private frameStart = 0;

  constructor(
    raw: ServerWebSocket<unknown>,
    /** The PCM the caller was promised (`pcm_16000`, `ulaw_8000`); undefined for the providers' own MP3. */
    private readonly pcm: PcmPromise | undefined,
    /** The encoder of that PCM, for `mp3_*` and `opus_*` made here. */
    private readonly encoderFor?: (audio: AudioFormat) => PcmEncoder,
    /** With `sync_alignment=true`: the characters' timings, frame by frame. */
    private readonly aligner?: FrameAligner,
  ) {
    this.socket = new WsPort(raw);
  }

  event(event: TtsSessionEvent): void {
    if (event.type === "audio_started") this.started(event.format);
    else if (event.type === "alignment") this.aligner?.add(event);
    else if (event.type === "error") this.error(event.code, event.message);
    else if (event.type === "ended") {
      if (this.encoder) this.send(this.encoder.flush());
      if (this.aligner?.waiting) this.socket.sendEvent({ audio: "", isFinal: null, ...this.aligner.take(this.delivered) });
      this.socket.sendEvent({ isFinal: true });
    }
  }

  sendAudio(chunk: Uint8Array): void | Promise<void> {
    if (this.delivery) return this.delivery.process(chunk).then((audio) => (this.disposed ? undefined : this.deliver(audio)));
    return this.deliver(chunk);
  }

  private started(format: AudioFormat): void {
    this.delivery = PcmDelivery.for(this.pcm, format);
    this.encoder = this.encoderFor?.({ ...format, sampleRate: this.pcm?.rate ?? format.sampleRate });
    // Without a PCM promise, the audio is the providers' own MP3.
    if (this.aligner) this.clock = this.pcm ? sampleClock(this.pcm.rate, this.pcm.companding ? 1 : 2) : mp3Clock();
  }

  private deliver(audio: Uint8Array): void | Promise<void> {
    if (this.clock) this.delivered = this.clock.advance(audio);
    return this.send(this.encoder && audio.byteLength ? this.encoder.encode(audio) : audio);
  }

  close(code: number, reason: string): void {
    this.dispose();
    if (code === ERRORS.invalid_tts_frame.close) this.socket.close(BAD_FRAME.close, BAD_FRAME.error);
    else this.socket.close(code, reason);
  }

  /** Ends the connection with an error frame and the close its code calls for. */
  refuse(err: ApiError): void {
    this.error(err.code, err.message);
    this.close(err.closeCode, closeReason(err.code));
  }

  /** Bun's `drain` callback for this socket. */
  drain(): void {
    this.socket.drain();
  }

  /** The socket is gone: release a waiting sender and the PCM conversion. */
  dispose(): void {
    this.socket.drain();
    if (this.disposed) return;
    this.disposed = true;
    this.delivery?.release();
    this.encoder?.release?.();
  }

  private error(code: ErrorCode, message: string): void {
    const { error, close } = code === "invalid_tts_frame" ? BAD_FRAME : { error: code, close: ERRORS[code].close };
    this.socket.sendEvent({ message, error, code: close });
  }

  private send(audio: Uint8Array): void | Promise<void> {
    if (!audio.byteLength) return;
    const frame: Record<string, unknown> = { audio: base64Of(audio), isFinal: null, normalizedAlignment: null, alignment: null };
    if (this.aligner) {
      Object.assign(frame, this.aligner.take(this.frameStart, this.delivered));
      this.frameStart = this.delivered;
    }
    return this.socket.sendAudio(JSON.stringify(frame));
  }
}
