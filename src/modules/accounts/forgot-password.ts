import type { DatabasePool } from 'slonik';
import type { Config } from '../../config.ts';
import type { Producer } from '../../jobs/producer.ts';
import type { Clock } from '../../lib/clock.ts';
import type { Logger } from '../../lib/logger.ts';
import { findUserForLogin } from '../organisations/index.ts';
import { deliverSoon, queueMail } from '../mail/index.ts';
import { newResetToken, RESET_TOKEN_MINUTES } from './reset-token.ts';
import * as repo from './resets.repository.ts';

export const RESET_REQUESTED = 'If the account exists, a reset link has been sent';

// At most this many reset e-mails per user per token lifetime: the endpoint is open to anyone, and
// must not become a way to flood someone's mailbox.
const MAX_RESETS_PER_WINDOW = 3;

type Deps = { config: Config; db: DatabasePool; clock: Clock; producer: Producer; logger: Logger };

/** The integrator's own reset page (PASSWORD_RESET_URL) for this token, if there is one. */
const resetLink = (config: Config, token: string): string | null =>
  config.PASSWORD_RESET_URL ? config.PASSWORD_RESET_URL.replaceAll('{token}', encodeURIComponent(token)) : null;

/**
 * Runs after the 202 has been sent, so the answer's timing says nothing about the username. An
 * unknown, disabled or address-less account gets nothing, silently.
 */
export async function sendResetMail(deps: Deps, username: string): Promise<void> {
  const user = await findUserForLogin(deps.db, username.trim());
  if (!user || user.disabled || user.org_deleted || !user.email) return;
  const now = deps.clock.now();
  const { token, digest } = newResetToken();
  const email = user.email;
  const outboxId = await deps.db.transaction(async (tx) => {
    const resetId = await repo.insertResetWithinCap(tx, {
      userId: user.id,
      tokenHash: digest,
      now,
      expiresAt: new Date(now.getTime() + RESET_TOKEN_MINUTES * 60_000),
      since: new Date(now.getTime() - RESET_TOKEN_MINUTES * 60_000),
      max: MAX_RESETS_PER_WINDOW,
    });
    if (resetId === null) return null;
    return queueMail(tx, deps.config, {
      dedupeKey: `password-reset-${resetId}`,
      to: email,
      message: { template: 'password_reset', data: { username: user.username, token, link: resetLink(deps.config, token), validMinutes: RESET_TOKEN_MINUTES } },
    });
  });
  if (outboxId === null) {
    deps.logger.info({ userId: user.id }, 'password reset not sent: too many recent requests');
    return;
  }
  await deliverSoon(deps.producer, outboxId, deps.logger, 'reset e-mail');
}
