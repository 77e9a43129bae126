import { render } from "preact";
import { useState } from "preact/hooks";
import { api } from "./api.ts";
import { Dashboard } from "./dashboard/dashboard.tsx";
import { Header } from "./header.tsx";
import { Landing } from "./landing.tsx";
import { Playground } from "./playground/playground.tsx";
import { loadSession, type Session, saveSession } from "./session.ts";

const path = location.pathname.replace(/\/+$/, "") || "/";

function App() {
  const [session, setSession] = useState(loadSession);
  // Signed in on the playground, one goes on trying it; anywhere else, on to one's dashboard.
  const signIn = (s: Session) => {
    saveSession(s);
    if (path === "/playground") setSession(s);
    else location.assign("/dashboard");
  };
  // Signing out revokes the key this tab signed in with: each sign-in mints one.
  const signOut = async () => {
    if (session) await api(`/account/keys/${encodeURIComponent(session.prefix)}`, { method: "DELETE", key: session.key }).catch(() => undefined);
    saveSession(undefined);
    setSession(undefined);
  };
  const view =
    path === "/dashboard" && session ? (
      <Dashboard session={session} />
    ) : path === "/playground" ? (
      <Playground session={session} onSignedIn={signIn} />
    ) : (
      <Landing session={session} onSignedIn={signIn} />
    );
  return (
    <>
      <Header path={path} session={session} onSignOut={signOut} />
      <main id="main">{view}</main>
    </>
  );
}

render(<App />, document.getElementById("app")!);
