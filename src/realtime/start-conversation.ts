import { ApiError } from "../errors.ts";
import type { TtsCache } from "../sessions/tts-cache/tts-cache.ts";
import type { Payer } from "../ledger/meter-types.ts";
import type { Candidate } from "../routing/candidate.ts";
import { planVoice, type VoiceLists, type Voiced } from "../planning/plan-voice.ts";
import { meteredSession } from "../sessions/admission.ts";
import type { SessionServices } from "../sessions/file-context.ts";
import { SttSession } from "../sessions/stt-session.ts";
import type { TtsSessionSetup } from "../sessions/tts-events.ts";
import { TtsSession } from "../sessions/tts-session.ts";
import { Conversation } from "./conversation/conversation.ts";
import type { ConversationPort } from "./conversation/conversation-events.ts";
import type { HearingSettings } from "./conversation/hearing.ts";
import type { OutputFormat } from "./output-formats.ts";
import { type ConversationPlan, planConversation } from "./plan.ts";
import type { RealtimeProfile } from "./profiles.ts";
import { openApplication } from "./open-application.ts";
import type { CallIdentity } from "./app-messages.ts";
import type { Database } from "../db/open.ts";
import type { PronunciationDictionaries } from "../pronunciation/dictionaries.ts";
import { locatorsOfBody } from "../pronunciation/locators.ts";

// A conversation of an admitted profile, built from its plan: the recognizer, each answer's
// speech and the application socket, metered on the payer. Every realtime surface
// (`/v1/realtime`, `/el` conversations, `/oai/realtime`) starts one and only frames its events.

/**
 * What a conversation takes of the app (the surfaces' `AppContext` has all of it), named here so
 * that this room need not import the context, which imports it.
 */
export interface ConversationContext extends VoiceLists, SessionServices {
  config: {
    providerConnectTimeoutMs: number;
    realtime: { allowPrivateUpstreams: boolean; appReplyTimeoutMs: number; appPingIntervalMs: number; answerQuietMs: number; idleTimeoutMs: number };
  };
  database: Database;
  ttsCache: TtsCache;
  pronunciation: Pick<PronunciationDictionaries, "lexicon">;
}

/** What a conversation starts from: who pays, the profile and its plan, and the candidates the payer can pay for. */
export interface OpenedHandshake {
  payer: Payer;
  profile: RealtimeProfile;
  plan: ConversationPlan;
  stt: Candidate[];
  tts: Candidate[];
  /** `/oai`: the session settings the client secret was minted with. */
  session?: Record<string, unknown>;
}

/** Whether a voice's language (`de-DE`) is the one asked for (`de-DE`, `de`), ignoring case. */
function speaks(voiceLanguage: string, asked: string): boolean {
  const [v, a] = [voiceLanguage.toLowerCase(), asked.toLowerCase()];
  return v === a || v.split("-")[0] === a || a.split("-")[0] === v;
}

/**
 * The first of the primary model's voices that speaks `language` (the current voice if it does),
 * with the candidates of its provider; the fallback models keep their own voices.
 */
async function voiceFor(ctx: ConversationContext, candidates: Candidate[], current: string | undefined, language: string): Promise<{ voice: string; candidates: Candidate[] }> {
  const primary = candidates.filter((b) => b.fallback === undefined);
  for (const binding of primary) {
    const voices = (await ctx.providers.get(binding.provider.id)?.voices()) ?? [];
    const speaking = voices.filter((v) => v.languages.some((l) => speaks(l, language)));
    const voice = speaking.find((v) => v.id === current) ?? speaking[0];
    if (voice) return { voice: voice.id, candidates: [...primary.filter((b) => b.provider.id === binding.provider.id), ...candidates.filter((b) => b.fallback !== undefined)] };
  }
  throw new ApiError("invalid_request", `no voice of the profile's TTS model speaks ${language}`);
}

/** What a surface's client may change of its profile for one conversation (ElevenLabs' overrides). */
export interface ConversationOverrides {
  greeting?: string;
  voice?: string;
  /** The surface's own audio format (OpenAI's PCM is 24 kHz only). */
  output?: OutputFormat;
  /** The surface shows the caller's speech probability (ElevenLabs' `vad_score`): the router VAD tells it where it decides the turns. */
  vadScores?: boolean;
  /** The telephone call the surface carries: told to the application in `setup`, and the application's `sendDigits` become `send_digits` events. */
  call?: { identity: Partial<CallIdentity>; customParameters: Record<string, string> };
}

/** A conversation of the profile the handshake found, told to `port`; its sessions are metered on `surface`. */
export async function startConversation(
  ctx: ConversationContext,
  id: string,
  h: OpenedHandshake,
  port: ConversationPort,
  surface: string,
  overrides: ConversationOverrides = {},
): Promise<Conversation> {
  const { plan, payer, profile } = h;
  /** What answers are spoken with; a `language` message (or the client's voice) may change it. */
  let speech: Voiced = { voice: plan.tts.voice, candidates: h.tts };
  if (overrides.voice) speech = await planVoice({ voice: overrides.voice, candidates: h.tts }, payer.tenantId, ctx);
  // Read once: every answer of the conversation is said with the same versions.
  const lexicon = await ctx.pronunciation.lexicon(payer.tenantId, locatorsOfBody(profile.pipeline.tts.pronunciation_dictionaries, "pipeline.tts.pronunciation_dictionaries"));
  let hearings = 0;
  const output = overrides.output ?? plan.output;
  const common = { log: ctx.log, metrics: ctx.metrics, connectTimeoutMs: ctx.config.providerConnectTimeoutMs, health: ctx.health, surface };
  return new Conversation(
    {
      id,
      profileId: profile.id,
      input: { audioFormat: plan.stt.audioFormat, sampleRate: plan.stt.sampleRate },
      output,
      greeting: overrides.greeting ?? plan.greeting,
      partialPrompts: plan.partialPrompts,
      language: plan.stt.language,
      // Other settings plan the recognizer anew, as the profile with them would.
      openStt: (sttPort, settings) => {
        const replanned = settings.language !== undefined || settings.manualCommits !== undefined;
        const stt = replanned ? planConversation(ctx.catalogue, (pid) => ctx.sttProviders.get(pid), withHearing(profile.pipeline, settings)).stt : plan.stt;
        const sttId = ++hearings === 1 ? `${id}.stt` : `${id}.stt_${hearings}`;
        const session = new SttSession(
          {
            ...stt,
            id: sttId,
            admit: () => meteredSession(ctx.meter, sttId, payer, replanned ? stt.candidates : h.stt, surface, replanned),
            // The conversation is idle only when nobody does anything (its own timeout), not when the caller sends no audio.
            idleTimeoutMs: 0,
            vadScores: overrides.vadScores,
          },
          { ...common, provider: (pid) => ctx.sttProviders.get(pid), port: sttPort, vadLanes: ctx.vadLanes },
        );
        ctx.sessions.add(session, "stt");
        return session;
      },
      // Each response is admitted anew: the balance may have run down since the conversation began.
      // An answer whose tokens name a language is spoken by a voice that speaks it, the conversation's
      // voice being kept when none does; the voice is settled at admission, before the session connects.
      openTts: (responseId, ttsPort, answer) => {
        const ttsId = `${id}.${responseId}`;
        const setup: TtsSessionSetup = {
          id: ttsId,
          voice: speech.voice,
          format: "pcm",
          sampleRate: output.sampleRate,
          autoFlush: true,
          cache: profile.pipeline.tts.cache,
          interactive: true,
          speed: plan.tts.speed,
          options: plan.tts.options,
          admit: async () => {
            const spoken = answer
              ? await voiceFor(ctx, h.tts, speech.voice, answer.language).catch((err: Error) => {
                  answer.refused(err.message);
                  return speech;
                })
              : speech;
            setup.voice = spoken.voice;
            return { ...(await meteredSession(ctx.meter, ttsId, payer, spoken.candidates, surface, true)), lexicon };
          },
        };
        const session = new TtsSession(setup, { ...common, provider: (pid) => ctx.providers.get(pid), ttsCache: ctx.ttsCache, port: ttsPort });
        ctx.sessions.add(session, "tts");
        return session;
      },
      speakIn: async (language) => {
        const chosen = await voiceFor(ctx, h.tts, speech.voice, language);
        speech = chosen;
        return chosen.voice;
      },
      phoneLine: overrides.call !== undefined,
      openApp: (onSignal) =>
        openApplication(
          ctx,
          profile.pipeline.upstream,
          {
            sessionId: id,
            profileId: profile.id,
            greeting: overrides.greeting ?? plan.greeting,
            ...(overrides.call ? { call: overrides.call.identity, customParameters: overrides.call.customParameters } : {}),
          },
          onSignal,
        ),
      answerQuietMs: ctx.config.realtime.answerQuietMs,
      idleTimeoutMs: ctx.config.realtime.idleTimeoutMs,
    },
    { port, log: ctx.log },
  );
}

function withHearing(pipeline: RealtimeProfile["pipeline"], { language, manualCommits }: HearingSettings): RealtimeProfile["pipeline"] {
  const input = { ...pipeline.stt.input };
  if (language !== undefined) input.language = language;
  if (manualCommits !== undefined) input.commit_strategy = manualCommits ? "manual" : "auto";
  return { ...pipeline, stt: { ...pipeline.stt, input } };
}
