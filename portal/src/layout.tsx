import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { isAdmin, keepsAccounts, useSession, verifies, type Me } from './session.tsx';
import { SessionWarning } from './session-warning.tsx';

type Who = (me: Me) => boolean;
const everyone: Who = () => true;

const LINKS: { href: string; label: string; who: Who }[] = [
  { href: '/portal', label: 'Overview', who: everyone },
  { href: '/portal/top-up', label: 'Top up', who: keepsAccounts },
  { href: '/portal/verify', label: 'Verify', who: verifies },
  { href: '/portal/batches', label: 'Batches', who: verifies },
  { href: '/portal/history', label: 'History', who: everyone },
  { href: '/portal/team', label: 'Team', who: isAdmin },
  { href: '/portal/api-clients', label: 'API clients', who: isAdmin },
  { href: '/portal/webhooks', label: 'Webhooks', who: isAdmin },
  { href: '/portal/links', label: 'Verification links', who: isAdmin },
  { href: '/portal/audit', label: 'Audit trail', who: keepsAccounts },
  { href: '/portal/settings', label: 'Settings', who: isAdmin },
  { href: '/portal/account', label: 'Account', who: everyone },
];

/** What a role may not do is not offered (and the API refuses it anyway). */
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
  const links = LINKS.filter((l) => l.who(me));
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
      <SessionWarning />
    </div>
  );
}

/** For the pages a role must not see, when reached by a typed address. */
function Only({ allowed, whom, children }: { allowed: boolean; whom: string; children: ComponentChildren }) {
  if (!allowed) {
    return (
      <section class="page">
        <h1>Not available</h1>
        <p>This page is for your organisation's {whom}.</p>
      </section>
    );
  }
  return <>{children}</>;
}

export function AdminOnly({ children }: { children: ComponentChildren }) {
  const { me } = useSession();
  return <Only allowed={isAdmin(me)} whom="administrators" children={children} />;
}

export function AccountsOnly({ children }: { children: ComponentChildren }) {
  const { me } = useSession();
  return <Only allowed={keepsAccounts(me)} whom="administrators and finance officers" children={children} />;
}

export function VerifiersOnly({ children }: { children: ComponentChildren }) {
  const { me } = useSession();
  return <Only allowed={verifies(me)} whom="administrators and team members" children={children} />;
}
