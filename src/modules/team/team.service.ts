import type { DatabasePool } from 'slonik';
import { requirePersonOrgAdmin, type Principal } from '../auth/index.ts';
import { listTeamMembers, updateTeamMember, type TeamMember } from '../organisations/index.ts';
import type { TeamMemberChange } from './team.schemas.ts';

/** An organisation administrator who is a person: API clients never manage the team. */
export function requireTeamManager(p: Principal): number {
  return requirePersonOrgAdmin(p);
}

export function listTeam(db: DatabasePool, p: Principal): Promise<readonly TeamMember[]> {
  return listTeamMembers(db, requireTeamManager(p));
}

export function changeTeamMember(db: DatabasePool, p: Principal, userId: number, change: TeamMemberChange): Promise<TeamMember> {
  return updateTeamMember(db, requireTeamManager(p), userId, change);
}
