import { z } from 'zod';
import { serialIdParam } from '../../lib/http.ts';
import { bearer, errorResponse, errors, json, jsonBody, md, TAGS, type Assert, type OpenAPIRegistry, type Same } from '../../openapi/common.ts';
import { organisationSettingsRow, settingsPatch, type TeamMember } from '../organisations/index.ts';
import { acceptInvitationBody, invitationPreview, invitationView, newInvitation, previewInvitationBody, TEAM_BY_INVITATION, teamList, teamMember, teamMemberChange } from './team.schemas.ts';

type _memberMatches = Assert<Same<z.infer<typeof teamMember>, TeamMember>>;

const MANAGERS = 'Organisation administrators who are persons (members, finance officers and API clients: 403). JSON bodies.';

/** The operations' own rules, markdown (shown under each operation at /docs; the tag's guide is team.guide.md). */
const LIST = `${MANAGERS} \`{"data": [{"id", "username", "email", "role", "disabled", "created_at"}]}\`: every user of the caller's organisation, oldest first; never a password hash.`;

const ADD = md(
  `Retired: answers 410 \`{"detail": "${TEAM_BY_INVITATION}"}\` to every signed-in caller, whatever the body, and creates nobody ` +
    '(a token that may call nothing yet, such as one that must change its password or enrol in two-factor sign-in first, gets that 403 first).',
  '',
  '- Users are invited (`POST /team/invitations`): the invitee chooses their own password, so no password is ever shown to anyone ' +
    "else. A temporary password (changed at first sign-in) is given only by the operator's CLI, `user:create --password`.",
  '- This call used to answer 201 with a `temporary_password`; integrations written for it now invite.',
);

const CHANGE = md(
  `${MANAGERS} \`{"disabled"?: boolean, "role"?: "member" | "finance" | "org_admin"}\` (at least one; else 400): 200 with the user.`,
  '',
  "- Disabling a user or changing the role ends the user's tokens at once. Disabling or demoting a user suspends the API clients they " +
    'created until another administrator adopts them (`team.user_updated` records it).',
  "- Another organisation's user, or an unknown id, is 404 `User not found` (the same answer).",
  "- Disabling or demoting the organisation's last active administrator is 409 `Cannot remove the organisation's last administrator`; " +
    "changes to one organisation's team are serialised, so two administrators demoting each other at the same moment cannot both " +
    "succeed. The operator's `user:disable` is not held to this rule.",
  '- A user the operator disabled (`user:disable`, or retiring the organisation) stays disabled until the operator\'s `user:enable`: ' +
    '`{"disabled": false}` answers 403 `This user was disabled by an operator: only an operator can enable them again (user:enable)`. ' +
    'Who disabled a user is recorded with the flag; users disabled before that record existed count as disabled by the operator.',
);

const INVITE = md(
  `${MANAGERS} \`{"email", "username", "role": "member" | "finance" | "org_admin"}\`: 201 ` +
    'with the invitation (`status: pending`, `expires_at`); an e-mail goes to `email` with a link carrying the token (`INVITATION_URL`, else the portal\'s ' +
    '`/portal/accept-invitation#token=...`), valid `INVITATION_TTL_HOURS` (72) hours and usable once, where the ' +
    'invitee chooses a password (the page calls `POST /invitations/accept`); the user is made then, with this username, e-mail and role.',
  '',
  '- Usernames are stored lower-case and unique across the service. A username that breaks a username rule (see the tag) is 400 ' +
    '`username: <rule>`; a bad e-mail 400; a missing or unknown role 400 naming the roles; a missing `username` or `email` 422.',
  '- The token is stored only as its SHA-256; the e-mail waits in the outbox sealed.',
  '- A username some user already holds (in any organisation): 409 `This username is not available: choose another username` ' +
    '(the answer never says who holds it). An open invitation does not hold its username: two organisations may invite the same ' +
    'one, and the first to be accepted makes the user. A username that already has an open invitation in the caller\'s own ' +
    'organisation: 409 `This username already has an open invitation in your organisation: revoke it to invite again`.',
  '- The e-mail tells the invitee, whatever the role, to open the link and choose a password, then sign in with the username; it names no API call.',
  '- Audit events: `team.invitation_sent`, `team.invitation_revoked`, `team.invitation_accepted`.',
);

const INVITATIONS = `${MANAGERS} Newest first, at most 500; each invitation's \`status\` (\`pending\`, \`accepted\`, \`revoked\`, \`expired\`) and, once accepted, \`user_id\`.`;

const PREVIEW = md(
  'No bearer token: the invitation token proves the invitee. `{"token"}` answers 200 `{"organisation", "role", "username", "expires_at"}`: ' +
    "what the portal's accept page shows before the invitee chooses a password. Nothing changes; the token stays usable.",
  '',
  '- The same refusals as `POST /invitations/accept` (400 for a used, revoked, unknown or expired token, or one whose sender may no longer invite).',
  '- A POST, not a GET: the token stays out of URLs and access logs.',
);

const ACCEPT = md(
  'No bearer token: the invitation token proves the invitee. `{"token", "password"}` makes the user with the invitation\'s username, ' +
    'e-mail and role and the chosen password, and answers 201 `{"id", "username", "role"}`; then sign in with `POST /login`.',
  '',
  '- The password rules apply: 400 naming the rule, the invitation stays usable.',
  '- A used, revoked or unknown token: 400 `This invitation is not valid: it was already used or revoked, or the link is wrong`; an ' +
    'expired one: 400 `This invitation has expired: ask an administrator of the organisation for a new one`; one whose sender was ' +
    'disabled or demoted since (an invitation carries its sender\'s authority): 400 `This invitation is no longer valid: the ' +
    'administrator who sent it may no longer invite; ask for a new one`.',
  '- Two acceptances at once: one makes the user, the other is refused.',
  '- The username was taken by another account first (another organisation\'s invitation to the same username accepted before ' +
    'this one, even at the same moment): 409 `The username of this invitation is no longer available: the administrator who invited ' +
    'you has been told, and can invite you again with another username`. The invitation is closed (`revoked`, audit event ' +
    '`team.invitation_revoked` by `system` with `reason: username_taken`) and its sender, when they have an e-mail address, is told by e-mail.',
);

const SETTINGS = md(
  `${MANAGERS} Changes the settings named in the body, each optional, and answers 200 with all the organisation's settings, e.g. ` +
    '`{"require_consent": false, "low_balance_units": null, "require_mfa": true}`. An empty body or an unknown field: 400; a wrong type: 422.',
  '',
  "- `require_mfa: true` makes two-factor sign-in mandatory for the organisation's administrators. Until an administrator has " +
    'enrolled, their tokens may call only `POST /me/mfa/totp`, `POST /me/mfa/totp/confirm`, `GET /me`, `GET /meorganisation`, ' +
    '`POST /change-password` and `POST /logout`; anything else answers 403 `{"detail": "Your organisation requires two-factor sign-in: ' +
    'enrol with POST /me/mfa/totp first", "code": "mfa_enrolment_required"}`. It takes effect on the next request, on tokens already ' +
    'issued too (the administrator who sets it is included). Members are not affected; they may still enrol.',
  '- `require_consent: true` makes a recorded consent mandatory for live verifications (see Verification, "Recorded consent").',
  '- `low_balance_units` (an integer from 1 to 1,000,000,000) sets the low-balance alert line (see the tag); `null` turns alerts off.',
  '- `alert_emails` (a list of at most 10 e-mail addresses, kept lower-cased and once each) chooses who gets the low-balance alerts; ' +
    '`[]` (the default) leaves them to the administrators. The addresses are not written to the audit trail ' +
    '(`organisation.settings_changed` names the setting only).',
  '- `address` (one line, up to 300 characters) and `tin` (the tax identification number: 8 to 20 digits, hyphens allowed between ' +
    'them, e.g. `12345678-0001`) are printed as the buyer on the organisation\'s VAT invoices (Top-up, "Invoices"); `null` removes ' +
    'either. An invoice keeps the values it was issued with.',
  '- `support_contact` (one sentence of at most 200 characters naming an e-mail address, a phone number of 7 to 15 digits, or a web ' +
    'address starting `https://` or `www.`; spaces and line breaks are folded to single spaces) is shown to the person on every ' +
    'verification link page that cannot go on: expired, used up, withdrawn, the organisation cannot take verifications, a failure. ' +
    'Anything else: 400 naming the rule; `null` removes it. Not written to the audit trail (it may name a person\'s phone).',
  '- `require_liveness: true` (default false) requires a liveness check with every face match: a face match with a plain `selfie` ' +
    '(`POST /verify-nin/face`, or a verification link page submitting a selfie) is refused 422 `liveness_required` before anything is ' +
    'looked up, held or charged, and the verdict then needs `face.liveness: passed` (see `POST /liveness/sessions`).',
);

export function register(registry: OpenAPIRegistry): void {
  const Member = teamMember.meta({ id: 'TeamMember', description: 'A user of the caller\'s organisation. Passwords are never shown.' });
  const List = teamList.meta({ id: 'TeamList' });
  const Change = teamMemberChange.meta({ id: 'TeamMemberChange', description: 'At least one of `disabled` and `role`.' });

  registry.registerPath({
    method: 'get',
    path: '/team',
    operationId: 'listTeam',
    tags: [TAGS.team],
    summary: "The users of the caller's organisation",
    description: LIST,
    security: bearer,
    responses: { 200: json(List), ...errors(401, 403, 429) },
  });

  registry.registerPath({
    method: 'post',
    path: '/team',
    operationId: 'addTeamMember',
    tags: [TAGS.team],
    summary: 'Retired: users are added by invitation',
    description: ADD,
    deprecated: true,
    security: bearer,
    responses: { ...errors(401, 403, 429), 410: errorResponse('Users are added by invitation') },
  });

  registry.registerPath({
    method: 'patch',
    path: '/team/{id}',
    operationId: 'updateTeamMember',
    tags: [TAGS.team],
    summary: 'Enable, disable, promote or demote a user',
    description: CHANGE,
    security: bearer,
    request: { params: z.object({ id: serialIdParam.meta({ description: 'The user id' }) }), body: jsonBody(Change) },
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
    description: INVITE,
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
    description: INVITATIONS,
    security: bearer,
    responses: { 200: json(z.object({ data: z.array(Invitation) }).meta({ id: 'InvitationList' })), ...errors(401, 403, 429) },
  });
  registry.registerPath({
    method: 'delete',
    path: '/team/invitations/{id}',
    operationId: 'revokeTeamInvitation',
    tags: [TAGS.team],
    summary: 'Revoke an open invitation',
    description: `${MANAGERS} Its link stops working at once. Revoking an open invitation answers 200 with it; any other id 404.`,
    security: bearer,
    request: { params: z.object({ id: serialIdParam.meta({ description: 'The invitation id' }) }) },
    responses: { 200: json(Invitation, 'Invitation revoked'), ...errors(401, 403, 429), 404: errorResponse('No open invitation with this id in the organisation') },
  });
  registry.registerPath({
    method: 'post',
    path: '/invitations/preview',
    operationId: 'previewInvitation',
    tags: [TAGS.team],
    summary: 'Read an invitation by its token: the organisation, the role and the username',
    description: PREVIEW,
    security: [],
    request: { body: jsonBody(previewInvitationBody.meta({ id: 'PreviewInvitation' })) },
    responses: {
      200: json(invitationPreview.meta({ id: 'InvitationPreview' }), 'The invitation can be accepted'),
      ...errors(415, 422, 429),
      400: errorResponse('The token is unknown, used, revoked or expired, or its sender may no longer invite'),
    },
  });
  registry.registerPath({
    method: 'post',
    path: '/invitations/accept',
    operationId: 'acceptInvitation',
    tags: [TAGS.team],
    summary: 'Accept an invitation: choose a password, and the user is made',
    description: ACCEPT,
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
    description: 'Every member may read them (`PATCH /me/organisation` says what each means).',
    security: bearer,
    responses: { 200: json(Settings), ...errors(401, 403, 429) },
  });
  registry.registerPath({
    method: 'patch',
    path: '/me/organisation',
    operationId: 'updateOrganisationSettings',
    tags: [TAGS.team],
    summary: "Change the organisation's settings",
    description: SETTINGS,
    security: bearer,
    request: { body: jsonBody(settingsPatch) },
    responses: { 200: json(Settings, 'Settings changed'), ...errors(400, 401, 403, 415, 422, 429) },
  });
}
