import { randomBytes } from 'node:crypto';
import type { DatabasePool } from 'slonik';
import { requirePersonOrgAdmin, type Principal } from '../auth/index.ts';
import { createUser, findTeamMember, listTeamMembers, updateTeamMember, type TeamMember } from '../organisations/index.ts';
import type { NewTeamMember, TeamMemberChange } from './team.schemas.ts';

/** Organisation administrators who are persons manage the team; members and API clients do not. */
/** An organisation administrator who is a person: API clients never manage the team. */
export function requireTeamManager(p: Principal): number {
  return requirePersonOrgAdmin(p);
}

export function listTeam(db: DatabasePool, p: Principal): Promise<readonly TeamMember[]> {
  return listTeamMembers(db, requireTeamManager(p));
}

/** 16 characters of base64url: 96 random bits, typed once by the new user and then replaced. */
function temporaryPassword(): string {
  return randomBytes(12).toString('base64url');
}

export async function addTeamMember(db: DatabasePool, p: Principal, input: NewTeamMember): Promise<TeamMember & { temporary_password: string }> {
  const orgId = requireTeamManager(p);
  const password = temporaryPassword();
  const user = await createUser(db, {
    orgId,
    username: input.username,
    email: input.email,
    password,
    role: input.role,
    // The temporary password is shown once to the administrator: its owner must replace it at first login.
    requirePasswordChange: true,
  });
  return { ...(await findTeamMember(db, orgId, user.id)), temporary_password: password };
}

export function changeTeamMember(db: DatabasePool, p: Principal, userId: number, change: TeamMemberChange): Promise<TeamMember> {
  return updateTeamMember(db, requireTeamManager(p), userId, change);
}
