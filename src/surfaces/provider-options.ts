/**
 * Provider-native options from a query: unreserved bare keys, and `provider_options[<name>]=<value>`,
 * which wins over the bare form of the same name.
 */
export function providerOptions(params: URLSearchParams, reserved: string[]): Record<string, string> {
  const bare: Record<string, string> = {};
  const bracketed: Record<string, string> = {};
  for (const [key, value] of params) {
    const m = /^provider_options\[([^\]]+)\]$/.exec(key);
    if (m) bracketed[m[1]] = value;
    else if (!reserved.includes(key)) bare[key] = value;
  }
  return { ...bare, ...bracketed };
}
