import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { SCOPES } from '../../src/lib/api-scopes.ts';
import { CAPABILITIES, ROLE_TABLE, roleBook, roles } from '../../src/lib/roles.ts';
import { grantedScopes } from '../../src/modules/auth/auth.service.ts';

const withFixture = roleBook({ ...ROLE_TABLE, bystander: { label: 'bystander', inOrganisation: true, scopes: [], capabilities: [] } });

describe('roles have one definition', () => {
  it('a role added to the table with no capability is refused by every capability check and granted no scope', () => {
    expect(withFixture.names).toContain('bystander');
    for (const capability of CAPABILITIES) {
      expect(withFixture.may('bystander', capability)).toBe(false);
      expect(withFixture.rolesWith(capability)).not.toContain('bystander');
      // The roles already there keep exactly what they had.
      expect(withFixture.rolesWith(capability)).toEqual(roles.rolesWith(capability));
    }
    expect(withFixture.scopes('bystander')).toEqual([]);
    for (const scope of SCOPES) expect(() => grantedScopes(withFixture.scopes('bystander'), [scope], 'the bystander role')).toThrow(/beyond the bystander role/);
    expect(grantedScopes(withFixture.scopes('bystander'), undefined, 'the bystander role')).toEqual([]);
    // It is a role of an organisation (the schemas a team member and an API client are checked by accept it).
    expect(withFixture.orgRoleSchema.parse('bystander')).toBe('bystander');
    expect(withFixture.schema.parse('bystander')).toBe('bystander');
  });

  it('a role the table does not know is refused everything', () => {
    for (const capability of CAPABILITIES) expect(roles.may('ghost', capability)).toBe(false);
    expect(roles.scopes('ghost')).toEqual([]);
    expect(roles.inOrganisation('ghost')).toBe(false);
    expect(roles.schema.safeParse('ghost').success).toBe(false);
  });

  it("today's roles: administrators administer and may top up and manage webhooks, members may not, the finance role keeps the accounts, the platform administrator operates the platform and belongs to no organisation", () => {
    expect(roles.names).toEqual(['org_admin', 'member', 'finance', 'platform_admin']);
    expect(roles.rolesWith('administer_organisation')).toEqual(['org_admin']);
    expect(roles.rolesWith('keep_accounts')).toEqual(['org_admin', 'finance']);
    expect(roles.rolesWith('operate_platform')).toEqual(['platform_admin']);
    expect(roles.orgRoles).toEqual(['org_admin', 'member', 'finance']);
    expect(roles.scopes('org_admin')).toEqual([...SCOPES]);
    expect(roles.scopes('member')).toEqual(SCOPES.filter((s) => s !== 'topup' && s !== 'webhooks' && s !== 'links'));
    expect(roles.scopes('platform_admin')).toEqual([]);
  });

  it("the literal 'org_admin' appears in at most 2 files of src", () => {
    const out = execFileSync('grep', ['-rln', "'org_admin'", 'src'], { encoding: 'utf8' }).trim().split('\n').filter(Boolean);
    expect(out.length).toBeLessThanOrEqual(2);
  });
});
