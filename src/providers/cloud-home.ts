import type { DeclaredCatalogue } from "../catalogue/declare.ts";
import { defineProvider, type EnvReader, type ProviderRuntime } from "./home.ts";
import type { TtsProvider } from "./types.ts";
import type { SttProvider } from "./stt-types.ts";
import type { HttpProviderOptions } from "./upstream-http.ts";

/** A cloud provider's credentials: it is served when either is set. */
export interface CloudCredentials {
  apiKey?: string;
  baseUrl?: string;
}

interface CloudDeclaration<Id extends string, Extra> {
  /** Its id also names its environment variables: `<ID>_API_KEY` and `<ID>_BASE_URL` (upper case, `-` as `_`). */
  catalogue: DeclaredCatalogue<Id>;
  defaultBaseUrl: string;
  /** Settings beyond the key and base URL. */
  extra?: (env: EnvReader) => Extra;
  tts?: (options: HttpProviderOptions, settings: CloudCredentials & Extra, runtime: ProviderRuntime) => TtsProvider;
  stt?: (options: HttpProviderOptions, settings: CloudCredentials & Extra, runtime: ProviderRuntime) => SttProvider;
}

/** Connection options for a configured provider, or undefined when neither its key nor its base URL is set. */
export function connection(credentials: CloudCredentials, defaultBaseUrl: string, runtime: ProviderRuntime): HttpProviderOptions | undefined {
  const { apiKey, baseUrl } = credentials;
  if (!apiKey && !baseUrl) return undefined;
  return { apiKey, baseUrl: baseUrl ?? defaultBaseUrl, ...runtime.upstream };
}

/**
 * A provider reached over the network with a key and a base URL. Its models are always known to
 * the catalogue (other entries, such as a test's backup, may bind them); it is served only when configured.
 */
export function cloudProvider<Id extends string, Extra = Record<never, never>>(d: CloudDeclaration<Id, Extra>) {
  type Settings = CloudCredentials & Extra;
  const { id, spec, models } = d.catalogue;
  const prefix = id.toUpperCase().replaceAll("-", "_");
  const adapter =
    <P>(make: ((o: HttpProviderOptions, s: Settings, r: ProviderRuntime) => P) | undefined) =>
    (settings: Settings, runtime: ProviderRuntime): P | undefined => {
      const options = connection(settings, d.defaultBaseUrl, runtime);
      return make && options ? make(options, settings, runtime) : undefined;
    };
  return defineProvider({
    id,
    settings: (env: EnvReader): Settings => ({ apiKey: env.text(`${prefix}_API_KEY`) || undefined, baseUrl: env.url(`${prefix}_BASE_URL`), ...(d.extra?.(env) as Extra) }),
    catalogue: (settings: Settings) => ({ providers: settings.apiKey || settings.baseUrl ? [spec] : [], models }),
    tts: d.tts && adapter(d.tts),
    stt: d.stt && adapter(d.stt),
  });
}
