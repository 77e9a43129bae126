// The signed-in key lives in sessionStorage: it survives moving between the pages of one tab and
// is gone when the tab closes. It is never put in a URL.

const STORE = "voxroute.session";

export interface Session {
  key: string;
  prefix: string;
  email: string;
}

export function loadSession(): Session | undefined {
  try {
    const value = JSON.parse(sessionStorage.getItem(STORE) ?? "null");
    return typeof value?.key === "string" ? value : undefined;
  } catch {
    return undefined;
  }
}

export function saveSession(session: Session | undefined): void {
  if (session) sessionStorage.setItem(STORE, JSON.stringify(session));
  else sessionStorage.removeItem(STORE);
}
