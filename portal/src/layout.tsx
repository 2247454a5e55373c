import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { isAdmin, useSession } from './session.tsx';

const LINKS: { href: string; label: string; admin: boolean }[] = [
  { href: '/portal', label: 'Overview', admin: false },
  { href: '/portal/top-up', label: 'Top up', admin: true },
  { href: '/portal/verify', label: 'Verify', admin: false },
  { href: '/portal/batches', label: 'Batches', admin: false },
  { href: '/portal/history', label: 'History', admin: false },
  { href: '/portal/team', label: 'Team', admin: true },
  { href: '/portal/api-clients', label: 'API clients', admin: true },
  { href: '/portal/webhooks', label: 'Webhooks', admin: true },
  { href: '/portal/audit', label: 'Audit trail', admin: true },
  { href: '/portal/settings', label: 'Settings', admin: true },
  { href: '/portal/account', label: 'Account', admin: false },
];

/** What a member may not do is not offered (and the API refuses it anyway). */
export function Layout({ children }: { children: ComponentChildren }) {
  const { me, signOut } = useSession();
  const { path } = useLocation();
  const [signOutError, setSignOutError] = useState<string | null>(null);
  const leave = () => {
    setSignOutError(null);
    signOut().catch((err: unknown) =>
      setSignOutError(`You are still signed in: ${err instanceof Error ? err.message : 'the service could not be reached'}. Try again.`),
    );
  };
  const links = LINKS.filter((l) => !l.admin || isAdmin(me));
  return (
    <div class="shell">
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <span class="brand">idverify</span>
        <span class="org">{me.organisation?.name}</span>
        <span class="who">{me.username}</span>
        <button type="button" class="secondary" onClick={leave}>
          Sign out
        </button>
        {/* Inside the header: the shell is a grid whose cells are the header, the menu and the page. */}
        <p class="signout-error" role="alert" hidden={!signOutError}>
          {signOutError}
        </p>
      </header>
      <nav aria-label="Portal">
        <ul>
          {links.map((l) => (
            <li key={l.href}>
              <a href={l.href} aria-current={path === l.href ? 'page' : undefined}>
                {l.label}
              </a>
            </li>
          ))}
        </ul>
      </nav>
      <main id="main">{children}</main>
    </div>
  );
}

/** For the pages a member must not see, when reached by a typed address. */
export function AdminOnly({ children }: { children: ComponentChildren }) {
  const { me } = useSession();
  if (!isAdmin(me)) {
    return (
      <section class="page">
        <h1>Not available</h1>
        <p>This page is for your organisation's administrators.</p>
      </section>
    );
  }
  return <>{children}</>;
}
