// What an utterance's cache entry is keyed by: everything that changes its audio.

export interface CacheKeyInput {
  /** The tenant's id with `TTS_CACHE_SCOPE=tenant`, empty when entries are shared. */
  scope: string;
  provider: string;
  /** The provider's own model id. */
  model: string;
  voice?: string;
  /** The audio as the provider makes it. */
  encoding: string;
  sampleRate: number;
  speed?: number;
  /** Provider-native options (stability, style, …): every one may change the sound. */
  options: Record<string, string>;
  /** Character timings were asked: an entry made without them cannot answer a request for them. */
  alignment: boolean;
  /**
   * The version of the text rules applied before the provider (pronunciation dictionaries):
   * empty when none. The text below is already after them.
   */
  rulesVersion: string;
  /** The utterance as the provider is given it (white space around it included). */
  text: string;
}

/** White space runs as one space, Unicode NFC: texts that differ only there sound the same. */
export function normalizedText(text: string): string {
  return text.normalize("NFC").replace(/\s+/g, " ").trim();
}

export function cacheKey(input: CacheKeyInput): string {
  const options = Object.entries(input.options).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  // Timings cover every character written, white space too: with them the text is kept as it is.
  const text = input.alignment ? input.text : normalizedText(input.text);
  const parts = [input.scope, input.provider, input.model, input.voice ?? "", input.encoding, input.sampleRate, input.speed ?? "", options, input.alignment, input.rulesVersion, text];
  return new Bun.CryptoHasher("sha256").update(JSON.stringify(parts)).digest("hex");
}
