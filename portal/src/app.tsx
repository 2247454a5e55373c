import { useEffect, useState } from 'preact/hooks';
import { LocationProvider, Route, Router } from 'preact-iso';
import { ApiError, call, loadSession, NetworkError, onSignedOut, setCsrfToken, setSessionExpiry } from './api.ts';
import { Layout, VerifiersOnly } from './layout.tsx';
import { AcceptInvitation } from './pages/accept-invitation.tsx';
import { SignIn } from './pages/sign-in.tsx';
import { ResetPassword } from './pages/reset-password.tsx';
import { SessionContext, type Me } from './session.tsx';
import { Overview } from './pages/overview.tsx';
import { TopUp, TopUpReturn } from './pages/top-up.tsx';
import { Verify } from './pages/verify.tsx';
import { Batches } from './pages/batches.tsx';
import { History } from './pages/history.tsx';
import { Team } from './pages/team.tsx';
import { ApiClients } from './pages/api-clients.tsx';
import { Webhooks } from './pages/webhooks.tsx';
import { Links } from './pages/links.tsx';
import { Audit } from './pages/audit.tsx';
import { Settings } from './pages/settings.tsx';
import { Account } from './pages/account.tsx';
import { NotFound } from './pages/not-found.tsx';


type State = { kind: 'loading' } | { kind: 'signed-out'; reason?: string; username?: string } | { kind: 'change-password' } | { kind: 'signed-in'; me: Me };

export function App() {
  const [state, setState] = useState<State>({ kind: 'loading' });

  const loadMe = async () => {
    try {
      const r = await call<Me>('GET', '/me', {}, { quiet401: true });
      setState({ kind: 'signed-in', me: r.data });
    } catch (e) {
      const code = (e as { status?: number }).status;
      // 403 here is a first-login token: the password must be changed before anything else.
      if (code === 403) setState({ kind: 'change-password' });
      else setState({ kind: 'signed-out', ...(e instanceof NetworkError ? { reason: e.message } : {}) });
    }
  };

  useEffect(() => {
    loadSession().then(
      (signedIn) => (signedIn ? loadMe() : setState({ kind: 'signed-out' })),
      (e: unknown) => setState({ kind: 'signed-out', ...(e instanceof Error ? { reason: e.message } : {}) }),
    );
    return onSignedOut(() => {
      setCsrfToken(null);
      setSessionExpiry(null);
      setState({ kind: 'signed-out', reason: 'Your session has ended. Sign in again.' });
    });
  }, []);

  const signOut = async (reason = 'You have signed out.') => {
    try {
      await call('POST', '/logout', {}, { quiet401: true });
    } catch (err) {
      // A 401: the session had ended already (only a 204 clears the cookie, and it is dead anyway).
      // Anything else (429, 503, no network) left the session alive: saying "signed out" then would
      // leave a shared computer signed in for the next person, so the caller shows the failure.
      if (!(err instanceof ApiError && err.status === 401)) throw err;
    }
    setCsrfToken(null);
    setSessionExpiry(null);
    setState({ kind: 'signed-out', reason });
  };

  return screen();

  function screen() {
    if (location.pathname.startsWith('/portal/reset-password')) return <ResetPassword />;
    if (location.pathname.startsWith('/portal/accept-invitation')) {
      // The sign-in that follows has the new username filled in: only the chosen password is typed.
      return <AcceptInvitation onAccepted={(username) => setState({ kind: 'signed-out', username, reason: `Your account ${username} is ready: sign in with the password you chose.` })} />;
    }
    switch (state.kind) {
      case 'loading':
        return <p class="loading">Loading…</p>;
      case 'signed-out':
      case 'change-password':
        return (
          <SignIn
            reason={state.kind === 'signed-out' ? state.reason : undefined}
            username={state.kind === 'signed-out' ? state.username : undefined}
            mustChange={state.kind === 'change-password'}
            onSignedIn={loadMe}
          />
        );
      case 'signed-in':
        return (
          <SessionContext.Provider value={{ me: state.me, refresh: loadMe, signOut }}>
            <LocationProvider>
              <Layout>
                <Routes />
              </Layout>
            </LocationProvider>
          </SessionContext.Provider>
        );
    }
  }
}

// The finance role only pays and reads: Verify and Batches are not for it, even by a typed address.
const VerifyPage = () => (
  <VerifiersOnly>
    <Verify />
  </VerifiersOnly>
);
const BatchesPage = () => (
  <VerifiersOnly>
    <Batches />
  </VerifiersOnly>
);

function Routes() {
  return (
    <Router>
      <Route path="/portal" component={Overview} />
      <Route path="/portal/top-up" component={TopUp} />
      <Route path="/portal/top-up/return" component={TopUpReturn} />
      <Route path="/portal/verify" component={VerifyPage} />
      <Route path="/portal/batches" component={BatchesPage} />
      <Route path="/portal/history" component={History} />
      <Route path="/portal/team" component={Team} />
      <Route path="/portal/api-clients" component={ApiClients} />
      <Route path="/portal/webhooks" component={Webhooks} />
      <Route path="/portal/links" component={Links} />
      <Route path="/portal/audit" component={Audit} />
      <Route path="/portal/settings" component={Settings} />
      <Route path="/portal/account" component={Account} />
      <Route default component={NotFound} />
    </Router>
  );
}
