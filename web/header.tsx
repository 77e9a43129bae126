import type { Session } from "./session.ts";

const LINKS = [
  { path: "/dashboard", label: "Dashboard" },
  { path: "/playground", label: "Playground" },
  { path: "/docs", label: "API reference" },
];

export function Header({ path, session, onSignOut }: { path: string; session?: Session; onSignOut: () => void }) {
  return (
    <header class="top">
      <a class="skip" href="#main">
        Skip to content
      </a>
      <a class="brand" href="/">
        voxroute
      </a>
      <nav aria-label="Pages">
        {LINKS.map((l) => (
          <a href={l.path} aria-current={path === l.path ? "page" : undefined}>
            {l.label}
          </a>
        ))}
      </nav>
      {session && (
        <div class="who">
          <span>{session.email}</span>
          <button type="button" class="secondary" onClick={onSignOut}>
            Sign out
          </button>
        </div>
      )}
    </header>
  );
}
