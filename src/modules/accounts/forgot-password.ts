import type { DatabasePool } from 'slonik';
import type { Config } from '../../config.ts';
import { jobIds } from '../../jobs/catalog.ts';
import type { Producer } from '../../jobs/producer.ts';
import type { Clock } from '../../lib/clock.ts';
import { describe } from '../../lib/errors.ts';
import type { Logger } from '../../lib/logger.ts';
import { findUserForLogin } from '../organisations/index.ts';
import { queueSealedMail, type SealedMail } from '../mail/index.ts';
import { newResetToken, RESET_TOKEN_MINUTES } from './reset-token.ts';
import * as repo from './resets.repository.ts';

export const RESET_REQUESTED = 'If the account exists, a reset link has been sent';

// At most this many reset e-mails per user per token lifetime: the endpoint is open to anyone, and
// must not become a way to flood someone's mailbox.
const MAX_RESETS_PER_WINDOW = 3;

type Deps = { config: Config; db: DatabasePool; clock: Clock; producer: Producer; logger: Logger };

export function renderResetMail(config: Config, to: string, username: string, token: string): SealedMail {
  const link = config.PASSWORD_RESET_URL ? config.PASSWORD_RESET_URL.replaceAll('{token}', encodeURIComponent(token)) : null;
  const text = [
    `Someone asked to reset the password of the account "${username}".`,
    '',
    ...(link ? [`Choose a new password here within ${RESET_TOKEN_MINUTES} minutes:`, link, ''] : []),
    `Reset token (valid ${RESET_TOKEN_MINUTES} minutes, usable once): ${token}`,
    'Send it with your new password to POST /v1/reset-password.',
    '',
    'If you did not ask for this, ignore this e-mail: your password stays as it is.',
    '',
  ].join('\n');
  return { to, subject: 'Reset your password', text };
}

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
    return queueSealedMail(tx, deps.config.encryptionKeys, {
      kind: 'password_reset_email',
      dedupeKey: `password-reset-${resetId}`,
      mail: renderResetMail(deps.config, email, user.username, token),
    });
  });
  if (outboxId === null) {
    deps.logger.info({ userId: user.id }, 'password reset not sent: too many recent requests');
    return;
  }
  try {
    await deps.producer.enqueue('outbox.deliver', { outboxId }, { jobId: jobIds.outbox(outboxId) });
  } catch (err) {
    deps.logger.warn({ err: describe(err), outboxId }, 'reset e-mail not queued; the outbox sweep will send it');
  }
}
