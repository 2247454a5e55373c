import { z } from 'zod';
import { usernameSchema } from '../organisations/index.ts';
import { orgRoleSchema } from '../../lib/roles.ts';

const teamRole = orgRoleSchema;

export const newTeamMember = z.object({
  username: usernameSchema.meta({ description: 'NFKC-normalised and lower-cased; no control, bidirectional or invisible characters, no Latin mixed with Cyrillic or Greek' }),
  email: z.email({ error: (issue) => (issue.input === undefined ? undefined : 'must be an e-mail address') }),
  role: teamRole,
});
export type NewTeamMember = z.infer<typeof newTeamMember>;

export const teamMemberChange = z
  .object({ disabled: z.boolean().optional(), role: teamRole.optional() })
  .refine((c) => c.disabled !== undefined || c.role !== undefined, 'send disabled, role or both');
export type TeamMemberChange = z.infer<typeof teamMemberChange>;

export const teamMember = z.object({
  id: z.number().int(),
  username: z.string(),
  email: z.string().nullable(),
  role: teamRole,
  disabled: z.boolean(),
  created_at: z.string().meta({ description: 'ISO 8601' }),
});

export const teamList = z.object({ data: z.array(teamMember) });

export const createdTeamMember = teamMember.extend({
  temporary_password: z.string().meta({ description: 'Shown once; the user must change it at first sign-in.' }),
});
