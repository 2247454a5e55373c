import { z } from 'zod';
import { bearer, errorResponse, errors, json, jsonBody, TAGS, type Assert, type OpenAPIRegistry, type Same } from '../../openapi/common.ts';
import { organisationSettingsRow, settingsPatch, type TeamMember } from '../organisations/index.ts';
import { acceptInvitationBody, createdTeamMember, invitationView, newInvitation, newTeamMember, teamList, teamMember, teamMemberChange } from './team.schemas.ts';

type _memberMatches = Assert<Same<z.infer<typeof teamMember>, TeamMember>>;

const MANAGERS = 'Organisation administrators only (persons; API clients get 403).';

export function register(registry: OpenAPIRegistry): void {
  const Member = teamMember.meta({ id: 'TeamMember', description: 'A user of the caller\'s organisation. Passwords are never shown, except once at creation.' });
  const List = teamList.meta({ id: 'TeamList' });
  const Created = createdTeamMember.meta({ id: 'CreatedTeamMember' });
  const New = newTeamMember.meta({ id: 'NewTeamMember' });
  const Change = teamMemberChange.meta({ id: 'TeamMemberChange', description: 'At least one of `disabled` and `role`.' });

  registry.registerPath({
    method: 'get',
    path: '/team',
    operationId: 'listTeam',
    tags: [TAGS.team],
    summary: "The users of the caller's organisation",
    description: MANAGERS,
    security: bearer,
    responses: { 200: json(List), ...errors(401, 403, 429) },
  });

  registry.registerPath({
    method: 'post',
    path: '/team',
    operationId: 'addTeamMember',
    tags: [TAGS.team],
    summary: 'Add a user to the organisation',
    description: `${MANAGERS} The answer carries a temporary password, once; the user must change it at first sign-in. Kept for the integrations that use it: people are best added by invitation (\`POST /team/invitations\`), so that no password is ever shown to anyone else; the portal adds people by invitation only.`,
    security: bearer,
    request: { body: jsonBody(New) },
    responses: {
      201: json(Created, 'User created'),
      ...errors(400, 401, 403, 415, 422, 429),
      409: errorResponse('The username is taken'),
    },
  });

  registry.registerPath({
    method: 'patch',
    path: '/team/{id}',
    operationId: 'updateTeamMember',
    tags: [TAGS.team],
    summary: 'Enable, disable, promote or demote a user',
    description:
      `${MANAGERS} Disabling a user or changing a role ends the user's tokens at once. A user an operator disabled (\`user:disable\`) ` +
      'can be enabled again only by an operator (403). Disabling or demoting a user suspends the API clients they created until another administrator adopts them.',
    security: bearer,
    request: { params: z.object({ id: z.string().regex(/^\d+$/).meta({ description: 'The user id' }) }), body: jsonBody(Change) },
    responses: {
      200: json(Member, 'User changed'),
      ...errors(400, 401, 403, 404, 415, 422, 429),
      409: errorResponse("Cannot remove the organisation's last administrator"),
    },
  });
  registerInvitations(registry);
}

function registerInvitations(registry: OpenAPIRegistry): void {
  const Invitation = invitationView.meta({ id: 'Invitation', description: 'An invitation to join the team; the token is never shown (it is in the e-mail only)' });
  registry.registerPath({
    method: 'post',
    path: '/team/invitations',
    operationId: 'inviteTeamMember',
    tags: [TAGS.team],
    summary: 'Invite someone to the team by e-mail',
    description: `${MANAGERS} E-mails a link, valid \`INVITATION_TTL_HOURS\` (72) hours and usable once, with which the invitee chooses a password; the user is made then, with this username and role.`,
    security: bearer,
    request: { body: jsonBody(newInvitation.meta({ id: 'NewInvitation' })) },
    responses: {
      201: json(Invitation, 'Invitation sent'),
      ...errors(400, 401, 403, 415, 422, 429),
      409: errorResponse('The username is taken, or already has an open invitation'),
    },
  });
  registry.registerPath({
    method: 'get',
    path: '/team/invitations',
    operationId: 'listTeamInvitations',
    tags: [TAGS.team],
    summary: "The organisation's invitations, newest first (at most 500)",
    description: MANAGERS,
    security: bearer,
    responses: { 200: json(z.object({ data: z.array(Invitation) }).meta({ id: 'InvitationList' })), ...errors(401, 403, 429) },
  });
  registry.registerPath({
    method: 'delete',
    path: '/team/invitations/{id}',
    operationId: 'revokeTeamInvitation',
    tags: [TAGS.team],
    summary: 'Revoke an open invitation',
    description: `${MANAGERS} Its link stops working at once.`,
    security: bearer,
    request: { params: z.object({ id: z.string().regex(/^\d+$/).meta({ description: 'The invitation id' }) }) },
    responses: { 200: json(Invitation, 'Invitation revoked'), ...errors(401, 403, 429), 404: errorResponse('No open invitation with this id in the organisation') },
  });
  registry.registerPath({
    method: 'post',
    path: '/invitations/accept',
    operationId: 'acceptInvitation',
    tags: [TAGS.team],
    summary: 'Accept an invitation: choose a password, and the user is made',
    description: 'No bearer token: the invitation token proves the invitee. Usable once, until the invitation expires; then sign in with `POST /login`.',
    security: [],
    request: { body: jsonBody(acceptInvitationBody.meta({ id: 'AcceptInvitation' })) },
    responses: {
      201: json(z.object({ id: z.number().int(), username: z.string(), role: teamMember.shape.role }).meta({ id: 'AcceptedInvitation' }), 'User made'),
      ...errors(415, 422, 429),
      400: errorResponse('The token is unknown, used, revoked or expired, or the password breaks a rule'),
      409: errorResponse('The username was taken meanwhile'),
    },
  });
}

export function registerSettings(registry: OpenAPIRegistry): void {
  const Settings = organisationSettingsRow.meta({ id: 'OrganisationSettings', description: "The caller's organisation's own policies" });
  registry.registerPath({
    method: 'get',
    path: '/me/organisation',
    operationId: 'getOrganisationSettings',
    tags: [TAGS.team],
    summary: "The caller's organisation's settings",
    description: 'Every member may read them.',
    security: bearer,
    responses: { 200: json(Settings), ...errors(401, 403, 429) },
  });
  registry.registerPath({
    method: 'patch',
    path: '/me/organisation',
    operationId: 'updateOrganisationSettings',
    tags: [TAGS.team],
    summary: "Change the organisation's settings",
    description: `${MANAGERS} Send only the settings to change; the answer is every setting as it now stands.`,
    security: bearer,
    request: { body: jsonBody(settingsPatch) },
    responses: { 200: json(Settings, 'Settings changed'), ...errors(400, 401, 403, 415, 422, 429) },
  });
}
