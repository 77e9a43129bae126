import type { ServerWebSocket } from "bun";
import type { AppContext } from "../context.ts";
import { limitsOfKey } from "../limits/key-limits.ts";
import { ApiError } from "../errors.ts";
import type { Payer } from "../ledger/meter-types.ts";
import type { Conversation } from "../realtime/conversation/conversation.ts";
import { type ConversationPlan, planConversation } from "../realtime/plan.ts";
import type { RealtimeProfile } from "../realtime/profiles.ts";
import { phonePlan } from "../realtime/phone-profile.ts";
import type { OpenedHandshake } from "../realtime/start-conversation.ts";
import { admitSocket, type SocketAdmission } from "./ws-admission.ts";
import { keepConnection, type SocketData, takeConnection } from "./ws-connections.ts";
import { WsPort } from "./ws-port.ts";
import { recordId } from "../util/record-id.ts";

// What every realtime surface (`/v1/realtime`, `/el` conversations, `/oai/realtime`) does around
// its framing: the handshake's admission (credential, profile, plan, balance; ws-admission.ts) and
// the sockets; the conversation itself is the realtime room's (realtime/start-conversation.ts).
// What can be answered as HTTP is answered before the upgrade (400 plan, 404 profile, 402
// balance); a bad credential closes 4401/4403 after it.

/**
 * How a socket says what it opens: a single-use secret (it names what it opens), or a profile and
 * a key. With `transcription` (only `/oai` asks it) a key alone, or a secret minted for it, opens
 * a transcription session instead of a profile.
 */
export interface Opening {
  secret?: string | null;
  profileId?: string | null;
  key?: string;
  transcription?: boolean;
  /** A phone call: the profile planned for µ-law at 8 kHz (realtime/phone-profile.ts). */
  phone?: boolean;
}

/** Who pays for a realtime socket, and what it opens: a profile, or (none) a transcription session with the settings a secret was minted with. */
interface RealtimePayer extends Payer {
  profileId?: string | null;
  session?: Record<string, unknown>;
}

/** The profile a realtime socket runs, and its plan. */
interface ProfilePlan {
  profile: RealtimeProfile;
  conversation: ConversationPlan;
}

export type RealtimeAdmission = SocketAdmission<ProfilePlan, RealtimePayer>;

/**
 * The credential: a secret is spent here. A secret that opens another profile than the one
 * named, or a transcription session where a profile must be named, is as invalid as an unknown one.
 */
async function payerOf(ctx: AppContext, { secret, profileId, key, transcription }: Opening): Promise<RealtimePayer> {
  if (!secret) return { ...(await ctx.keys.authenticate(key)), profileId };
  const redeemed = await ctx.clientSecrets.redeem(secret);
  if (profileId && profileId !== redeemed.profileId) throw new ApiError("invalid_client_secret", "the client secret opens another profile");
  if (!redeemed.profileId && !transcription) throw new ApiError("invalid_client_secret", "the client secret opens a transcription session, not a profile");
  // Its minting key's budgets apply (read with the secret's redemption, already a database write).
  const limits = await limitsOfKey(ctx.database.sql, redeemed.keyId);
  return { tenantId: redeemed.tenantId, keyId: redeemed.keyId, limits, profileId: redeemed.profileId, ...(redeemed.session ? { session: redeemed.session } : {}) };
}

/** A realtime socket's admission: who pays, then the profile they named, its plan, and what they can pay for of it. */
export function admitRealtime(ctx: AppContext, opening: Opening): Promise<RealtimeAdmission> {
  return admitSocket(ctx, {
    credential: () => payerOf(ctx, opening),
    plan: async (payer) => {
      if (!payer?.profileId) return undefined;
      const profile = await ctx.profiles.get(payer.tenantId, payer.profileId);
      const sttProvider = (id: string) => ctx.sttProviders.get(id);
      if (opening.phone) return phonePlan(ctx.catalogue, sttProvider, profile);
      return { profile, conversation: planConversation(ctx.catalogue, sttProvider, profile.pipeline) };
    },
    wants: ({ conversation: { stt, tts } }) => [{ candidates: stt.candidates }, tts],
  });
}

/** The conversation of an admission that named a profile (its credential was not refused). */
export function openedConversation({ payer, plan, affordable: [stt, tts] }: RealtimeAdmission): OpenedHandshake {
  if (!payer || !plan || !stt || !tts) throw new Error("only an admitted profile opens a conversation");
  return { payer, profile: plan.profile, plan: plan.conversation, stt, tts, ...(payer.session ? { session: payer.session } : {}) };
}

/** What a conversation route keeps per socket. */
export interface ConversationConnection {
  port: WsPort;
  conversation?: Conversation;
  /** The socket closed: a conversation still starting is abandoned when it arrives. */
  gone: boolean;
  /** What else the socket holds that its close must end (a converter, a transcription session). */
  onClose?: () => void;
  /** The client's frames, as Bun delivers them (text as a string, binary as a Buffer). */
  onFrame?: (frame: string | Uint8Array) => void;
}

/** A conversation socket's data: its handshake's admission, then its connection. */
export type ConversationSocket = SocketData<ConversationConnection> & { admission: RealtimeAdmission };

/** A socket that opened: its connection (kept until it closes) and its session id, `<idPrefix>_<32 hex>`. */
export function openConversation(ws: ServerWebSocket<SocketData<ConversationConnection>>, idPrefix: string): { conn: ConversationConnection; id: string } {
  const conn: ConversationConnection = { port: new WsPort(ws), gone: false };
  keepConnection(ws, conn);
  return { conn, id: recordId(idPrefix).replaceAll("-", "") };
}

/** Bun's `message`, `drain` and `close` for a conversation socket. */
export const conversationSocket = {
  message(ws: ServerWebSocket<SocketData<ConversationConnection>>, frame: string | Uint8Array): void {
    ws.data.connection?.onFrame?.(frame);
  },
  drain(ws: ServerWebSocket<SocketData<ConversationConnection>>): void {
    ws.data.connection?.port.drain();
  },
  close(ws: ServerWebSocket<SocketData<ConversationConnection>>): void {
    const conn = takeConnection(ws);
    if (!conn) return;
    conn.gone = true;
    conn.conversation?.abort();
    conn.onClose?.();
    conn.port.drain();
  },
};
