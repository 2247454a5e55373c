/**
 * The API reference lives in the OpenAPI document (served at /docs, rendered by
 * `npm run docs`), not in a prose file beside it. The document is built in memory, as the service and
 * the client generator build it.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { buildOpenApiDocument } from '../../src/api-document/document.ts';

const REPO = fileURLToPath(new URL('../..', import.meta.url));
const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;

type Op = { tags?: string[]; description?: string };

describe('the OpenAPI document carries the API reference', () => {
  const doc = buildOpenApiDocument();
  const declared = new Map((doc.tags ?? []).map((t) => [t.name, t.description ?? '']));

  it('every tag an operation uses is declared with its guide: a summary and the prose of its area', () => {
    const used = new Set<string>();
    for (const item of Object.values(doc.paths ?? {}) as Record<string, Op | undefined>[]) {
      for (const m of METHODS) for (const tag of item[m]?.tags ?? []) used.add(tag);
    }
    expect(used.size).toBeGreaterThan(5);
    for (const tag of used) {
      expect(declared.has(tag), `tag ${tag} is declared at the top level`).toBe(true);
      expect(declared.get(tag)!.trim().length, `tag ${tag} has a description`).toBeGreaterThan(0);
    }
    // What each area's prose must still say, one marker per former section of docs/api-reference.md:
    // in its tag's guide, or in the description of one of its operations (where a rule of one
    // operation lives).
    const area = new Map([...declared].map(([tag, text]) => [tag, [text]]));
    for (const item of Object.values(doc.paths ?? {}) as Record<string, Op | undefined>[]) {
      for (const m of METHODS) for (const tag of item[m]?.tags ?? []) area.get(tag)?.push(item[m]?.description ?? '');
    }
    const markers: Record<string, string[]> = {
      Authentication: ['invalid_grant', 'mfa_required', 'LOGIN_MAX_FAILURES', 'insufficient_scope', 'api_client_suspended', 'require_password_change', 'Invalid or expired reset'],
      Team: ['user:create', 'must not mix Latin letters', 'require_mfa', 'low_balance_units'],
      Verification: ['upstream_circuit_open', 'residenceAdress', 'Idempotent-Replayed', 'vnin_wrong_enterprise', 'Preference-Applied', 'org_pending_cap', 'notice_version', 'all_match', 'TEST DATA', 'authority_busy'],
      Batches: ['BAT-', 'client_ref', 'insufficient_units', 'batch cancelled before this row was looked up'],
      Reasons: ['nyscCheck'],
      'Top-up': ['service_charge', 'refund_due', 'charged_back', 'TOPUP_RECHECK_DAYS'],
      'Inbound webhooks': ['x-paystack-signature'],
      History: ['next_cursor', 'CSV_EXPORTS_PER_ORG', 'invalid cursor', 'fixture_verifications'],
      'Audit trail': ['verification.requeried', 'audit:verify', 'known_account'],
    };
    for (const [tag, words] of Object.entries(markers)) {
      for (const word of words) expect((area.get(tag) ?? []).join('\n'), `${tag} says ${word}`).toContain(word);
    }
  });

  it('info.description holds the conventions, errors and versioning every endpoint shares', () => {
    const text = doc.info.description ?? '';
    for (const s of ['{"detail": "..."}', 'must not contain control characters', 'kobo', 'X-Request-Id', 'Compatibility policy', 'successor-version', 'RFC 6749']) {
      expect(text, s).toContain(s);
    }
  });

  it('the reference keeps internals out (Redis keys, SQL, source files) and has one source', () => {
    const operations = (Object.values(doc.paths ?? {}) as Record<string, Op | undefined>[]).flatMap((item) => METHODS.map((m) => item[m]?.description ?? ''));
    const texts = [doc.info.description ?? '', ...declared.values(), ...operations].join('\n');
    for (const internal of ['REDIS_PREFIX', 'WHERE NOT', 'token-memo', 'audit_chain_head', 'bench/']) expect(texts, internal).not.toContain(internal);
    expect(existsSync(`${REPO}/docs/api-reference.md`), 'docs/api-reference.md is gone').toBe(false);
  });
});
