import { answerJson, cloneTimeout, cloningExchange, cloningFailure, lookupTimeout, unexpectedAnswer, upstreamFailure, type CloningOptions, type UpstreamAnswer } from "../cloning-http.ts";
import type { ClonedVoice, CloneRequest, VoiceCloning } from "../voice-cloning.ts";

/**
 * ElevenLabs instant voice cloning: `POST /v1/voices/add` (multipart `name`, `files` once per
 * recording, `description`, `labels` as JSON: the language goes there) answers
 * `{voice_id, requires_verification}`; `GET /v1/voices/{id}`; `DELETE /v1/voices/{id}`. An instant
 * clone is usable at once unless ElevenLabs asks for the speaker's verification (done in its own
 * app): until then the voice is `processing`. IVC takes no model: a request's `model` is not sent.
 */
export class ElevenLabsCloning implements VoiceCloning {
  private readonly provider = "elevenlabs";

  constructor(private readonly options: CloningOptions) {}

  async clone(req: CloneRequest): Promise<ClonedVoice> {
    const form = new FormData();
    form.set("name", req.name);
    for (const file of req.files) form.append("files", new File([file.data], file.name, { type: file.type }));
    if (req.description) form.set("description", req.description);
    if (req.language) form.set("labels", JSON.stringify({ language: req.language }));
    const answer = await this.call("POST", "/v1/voices/add", form, cloneTimeout(this.options));
    if (!answer.ok) throw cloningFailure(this.provider, answer, this.options.apiKey);
    const made = answerJson(this.provider, answer);
    if (typeof made.voice_id !== "string" || !made.voice_id) throw unexpectedAnswer(this.provider, "a clone without a voice_id");
    return { providerVoiceId: made.voice_id, status: made.requires_verification === true ? "processing" : "active" };
  }

  async status(voiceId: string): Promise<{ status: "active" | "processing" } | undefined> {
    const answer = await this.call("GET", this.voicePath(voiceId));
    if (gone(answer)) return undefined;
    if (!answer.ok) throw upstreamFailure(this.provider, answer);
    const voice = answerJson(this.provider, answer);
    if (typeof voice.voice_id !== "string") throw unexpectedAnswer(this.provider, "a voice without a voice_id");
    const verification = voice.voice_verification;
    return { status: verification?.requires_verification === true && verification.is_verified !== true ? "processing" : "active" };
  }

  async remove(voiceId: string): Promise<void> {
    const answer = await this.call("DELETE", this.voicePath(voiceId));
    if (answer.ok || gone(answer)) return;
    throw upstreamFailure(this.provider, answer);
  }

  private voicePath = (voiceId: string) => `/v1/voices/${encodeURIComponent(voiceId)}`;

  private call(method: string, path: string, body?: FormData, timeoutMs = lookupTimeout(this.options)): Promise<UpstreamAnswer> {
    const headers: Record<string, string> = this.options.apiKey ? { "xi-api-key": this.options.apiKey } : {};
    return cloningExchange(this.provider, `${this.options.baseUrl}${path}`, { method, headers, body }, timeoutMs);
  }
}

/** ElevenLabs has answered a voice it does not have both ways: 404, and 400 with one of these detail statuses. */
const GONE = new Set(["voice_not_found", "voice_does_not_exist"]);

function gone(answer: UpstreamAnswer): boolean {
  return answer.status === 404 || (answer.status === 400 && GONE.has(answer.json?.detail?.status));
}
