import type { DatabasePool } from 'slonik';
import type { Config } from '../config.ts';
import { AppError } from '../lib/errors.ts';
import { createLogger } from '../lib/logger.ts';
import { checkLowBalance } from '../modules/alerts/index.ts';
import { recordAudit, verifyChain } from '../modules/audit/index.ts';
import { waitingBatchRows } from '../modules/batches/index.ts';
import * as orgs from '../modules/organisations/index.ts';
import { eraseSubjectData, exportSubject } from '../modules/verification/index.ts';
import { int, need, UsageError, type Flags } from './flags.ts';

/** The audit chain, data-subject requests and organisation settings (operators' side). */
export async function runComplianceCommand(db: DatabasePool, config: Config, command: string, flags: Flags): Promise<unknown> {
  switch (command) {
    case 'audit:verify': {
      const report = await verifyChain(db);
      if (!report.ok) throw new AppError('conflict', `audit chain broken at event ${report.broken_at ?? '?'}: ${report.reason}`);
      return report;
    }
    case 'subject:export':
      return exportSubject({ db, config }, waitingBatchRows(config), need(flags, 'nin'), flags.org === undefined ? null : int(flags, 'org')!);
    case 'subject:erase': {
      const nin = need(flags, 'nin');
      if (flags.confirm !== true) throw new UsageError('subject:erase cannot be undone: add --confirm');
      return eraseSubjectData({ db, config }, waitingBatchRows(config), nin);
    }
    case 'org:settings': {
      // The settings an organisation's administrators set with PATCH /me/organisation, by an operator.
      const orgId = int(flags, 'org')!;
      const patch: orgs.SettingsPatch = {};
      const consent = flags['require-consent'];
      if (consent !== undefined) {
        if (consent !== 'true' && consent !== 'false') throw new UsageError('--require-consent must be true or false');
        patch.require_consent = consent === 'true';
      }
      const mfa = flags['require-mfa'];
      if (mfa !== undefined) {
        if (mfa !== 'true' && mfa !== 'false') throw new UsageError('--require-mfa must be true or false');
        patch.require_mfa = mfa === 'true';
      }
      const liveness = flags['require-liveness'];
      if (liveness !== undefined) {
        if (liveness !== 'true' && liveness !== 'false') throw new UsageError('--require-liveness must be true or false');
        patch.require_liveness = liveness === 'true';
      }
      if (flags['face-match-threshold'] !== undefined) patch.face_match_threshold = int(flags, 'face-match-threshold')!;
      const line = flags['low-balance-units'];
      if (line !== undefined) patch.low_balance_units = line === 'off' ? null : int(flags, 'low-balance-units')!;
      const contact = flags['support-contact'];
      if (contact !== undefined) {
        if (typeof contact !== 'string') throw new UsageError('--support-contact needs a sentence (or "off" to remove it)');
        patch.support_contact = contact === 'off' ? null : contact;
      }
      if (Object.keys(patch).length === 0) return orgs.organisationSettings(db, orgId);
      const checked = orgs.settingsPatch.safeParse(patch);
      if (!checked.success) throw new AppError('bad_request', checked.error.issues[0]!.message);
      return db.transaction(async (tx) => {
        const saved = await orgs.updateOrganisationSettings(tx, orgId, checked.data);
        // The support contact may name a person's phone: only its name goes to the trail (as the PATCH does).
        const { support_contact: _contact, ...values } = checked.data;
        await recordAudit(tx, { orgId, actor: 'operator', action: 'organisation.settings_changed', target: `org:${orgId}`, details: { changed: Object.keys(patch), ...values } });
        return saved;
      });
    }
    default:
      throw new UsageError(`unknown command ${command}`);
  }
}

/** wallet:adjust with negative units is a debit: it may cross the low-balance line (the outbox sweep sends the e-mail). */
export async function afterDebit(db: DatabasePool, config: Config, orgId: number): Promise<void> {
  const logger = createLogger({ level: config.LOG_LEVEL, name: 'admin', destination: { write: (line: string) => process.stderr.write(line) } });
  await checkLowBalance({ db, config, logger }, orgId);
}
