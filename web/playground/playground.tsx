import type { Session } from "../session.ts";

export function Playground({ session }: { session?: Session; onSignedIn: (session: Session) => void }) {
  return <h1>Playground{session ? "" : ""}</h1>;
}
