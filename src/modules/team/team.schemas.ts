import { z } from 'zod';
import { usernameSchema } from '../organisations/index.ts';
import { orgRoleSchema } from '../../lib/roles.ts';

const teamRole = orgRoleSchema;

/** POST /team/invitations: who is invited, as what; the user is made when they accept. */
export const newInvitation = z.object({
  username: usernameSchema.meta({ description: 'NFKC-normalised and lower-cased; no control, bidirectional or invisible characters, no Latin mixed with Cyrillic or Greek' }),
  email: z.email({ error: (issue) => (issue.input === undefined ? undefined : 'must be an e-mail address') }),
  role: teamRole,
});
export type NewInvitation = z.infer<typeof newInvitation>;

/** The answer of the retired POST /team (410): where users come from now. */
export const TEAM_BY_INVITATION =
  "Users are added by invitation (POST /team/invitations); a temporary password is given only by the operator's CLI (user:create)";

export const acceptInvitationBody = z.object({
  token: z.string().min(1).max(200).meta({ description: 'The token of the invitation e-mail (also in its link)' }),
  password: z.string().max(1024).meta({ description: 'The password the new user chooses (the password rules of POST /change-password apply)' }),
});

/** POST /invitations/preview: the token alone. */
export const previewInvitationBody = acceptInvitationBody.pick({ token: true });

/** What the accept page shows before a password is chosen. */
export const invitationPreview = z.object({
  organisation: z.string().meta({ description: "The inviting organisation's name" }),
  role: teamRole,
  username: z.string().meta({ description: 'The username the new user will sign in with' }),
  expires_at: z.string().meta({ description: 'ISO 8601; the link works until then' }),
});

export const invitationView = z.object({
  id: z.number().int(),
  email: z.string(),
  username: z.string(),
  role: teamRole,
  status: z.enum(['pending', 'accepted', 'revoked', 'expired']),
  created_at: z.string().meta({ description: 'ISO 8601' }),
  expires_at: z.string().meta({ description: 'ISO 8601; the link works until then' }),
  accepted_at: z.string().nullable(),
  revoked_at: z.string().nullable(),
  user_id: z.number().int().nullable().meta({ description: 'The user made when it was accepted' }),
});

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
