import type { Binding } from "../catalogue/types.ts";
import type { ApiError } from "../errors.ts";
import { type Candidate, voiceOf } from "../routing/candidate.ts";
import type { TtsPort, TtsSessionSetup } from "./tts-events.ts";

/**
 * What a TTS session tells its client of its providers and of its end (`TtsSessionEvent`); the
 * events that go with the audio (`audio_started`, `flushed`, `alignment`) it sends as the audio comes.
 */
export class TtsEventsOut {
  private readySent = false;

  constructor(
    private readonly port: TtsPort,
    private readonly setup: TtsSessionSetup,
  ) {}

  /** `ready` once: a candidate after a failover is told by `provider_status`. */
  ready(): void {
    if (this.readySent) return;
    this.readySent = true;
    this.port.event({ type: "ready", sessionId: this.setup.id });
  }

  /** `connected` names the voice the provider speaks in (after a failover, the one now serving); a fallback model's candidate names it in every event. */
  status(status: "connecting" | "connected" | "failed", binding: Candidate, reason?: string): void {
    const voice = status === "connected" || binding.fallback !== undefined ? voiceOf(binding, this.setup.voice) : undefined;
    this.port.event({ type: "provider_status", provider: binding.provider.id, model: binding.canonical, status, ...(voice ? { voice } : {}), ...(reason ? { reason } : {}) });
  }

  ended(binding: Binding | undefined, characters: number, audioBytes: number): void {
    this.port.event({ type: "ended", sessionId: this.setup.id, provider: binding?.provider.id, model: binding?.canonical, characters, audioBytes });
  }

  error({ code, message, extra: { param, retry_after: after } }: ApiError): void {
    this.port.event({ type: "error", code, message, ...(param ? { param: String(param) } : {}), ...(typeof after === "number" ? { retryAfter: after } : {}) });
  }
}
