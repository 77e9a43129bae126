import { ApiError } from "../../errors.ts";
import { answerJson, cloneTimeout, cloningExchange, cloningFailure, lookupTimeout, unexpectedAnswer, upstreamFailure, type CloningOptions, type UpstreamAnswer } from "../cloning-http.ts";
import type { ClonedVoice, CloneRequest, VoiceCloning } from "../voice-cloning.ts";
import { cartesiaHeaders } from "./api.ts";

/**
 * Cartesia instant cloning: `POST /voices/clone` (multipart `clip`, `name`, `language`,
 * `description`) answers the new voice's metadata, `id` among it; `GET /voices/{id}`;
 * `DELETE /voices/{id}` answers 204. A clone is usable as soon as it is answered, so a voice
 * Cartesia has is `active`. Cartesia clones from one clip and takes no model (`model` is not
 * sent); `mode` and `enhance` are no longer read by the API version the adapter sends.
 */
export class CartesiaCloning implements VoiceCloning {
  private readonly provider = "cartesia";

  constructor(private readonly options: CloningOptions) {}

  async clone(req: CloneRequest): Promise<ClonedVoice> {
    const [clip, ...more] = req.files;
    if (!clip || more.length) throw new ApiError("custom_voices_failed", `cartesia clones a voice from exactly one recording, not ${req.files.length}`);
    const form = new FormData();
    form.set("clip", new File([clip.data], clip.name, { type: clip.type }));
    form.set("name", req.name);
    // Cartesia names languages by ISO 639-1 code alone ("en", not "en-US").
    if (req.language) form.set("language", req.language.split("-")[0]!.toLowerCase());
    if (req.description) form.set("description", req.description);
    const answer = await this.call("POST", "/voices/clone", form, cloneTimeout(this.options));
    if (!answer.ok) throw cloningFailure(this.provider, answer, this.options.apiKey);
    const made = answerJson(this.provider, answer);
    if (typeof made.id !== "string" || !made.id) throw unexpectedAnswer(this.provider, "a clone without an id");
    return { providerVoiceId: made.id, status: "active" };
  }

  async status(voiceId: string): Promise<{ status: "active" } | undefined> {
    const answer = await this.call("GET", this.voicePath(voiceId));
    if (answer.status === 404) return undefined;
    if (!answer.ok) throw upstreamFailure(this.provider, answer);
    if (typeof answerJson(this.provider, answer).id !== "string") throw unexpectedAnswer(this.provider, "a voice without an id");
    return { status: "active" };
  }

  async remove(voiceId: string): Promise<void> {
    const answer = await this.call("DELETE", this.voicePath(voiceId));
    if (!answer.ok && answer.status !== 404) throw upstreamFailure(this.provider, answer);
  }

  private voicePath = (voiceId: string) => `/voices/${encodeURIComponent(voiceId)}`;

  private call(method: string, path: string, body?: FormData, timeoutMs = lookupTimeout(this.options)): Promise<UpstreamAnswer> {
    return cloningExchange(this.provider, `${this.options.baseUrl}${path}`, { method, headers: cartesiaHeaders(this.options), body }, timeoutMs);
  }
}
