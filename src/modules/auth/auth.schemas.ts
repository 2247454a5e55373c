import { z } from 'zod';
import type { Scope } from '../../lib/api-scopes.ts';
import { roleSchema, type Role } from '../../lib/roles.ts';

/** What the OpenAPI document shows: either grant in one form. */
export const loginFormDoc = z.object({
  grant_type: z.enum(['password', 'client_credentials']).optional().meta({ description: '`password` (default) or `client_credentials`' }),
  username: z.string().optional().meta({ description: 'Required with the password grant' }),
  password: z.string().optional().meta({ description: 'Required with the password grant' }),
  otp: z.string().optional().meta({ description: 'With two-factor sign-in on: the 6-digit code of the authenticator app, or an unused recovery code' }),
  scope: z
    .string()
    .optional()
    .meta({ description: 'Space-delimited scopes to narrow the token to (RFC 6749 section 3.3), each one the user\'s role or the API client allows; left out: all of them' }),
  client_id: z.string().optional().meta({ description: 'client_credentials grant: here or as the HTTP Basic user name' }),
  client_secret: z.string().optional().meta({ description: 'client_credentials grant: here or as the HTTP Basic password' }),
});

export const tokenResponse = z.object({
  access_token: z.string(),
  token_type: z.literal('bearer'),
  expires_in: z.number().int(),
  scope: z.string().meta({
    description: 'The scopes granted, space-delimited (RFC 6749 section 5.1): those asked for, or all the role or API client allows (empty for a platform administrator)',
    example: 'verify requery history:read',
  }),
  require_password_change: z
    .literal(true)
    .optional()
    .meta({ description: 'Present on a first login: until the password is changed, this token may call only GET /me, POST /change-password and POST /logout' }),
});

export const CLIENT_SUBJECT = 'client:';

export const tokenClaims = z.object({
  // A user's id ("42"), or "client:" and an API client's client_id.
  sub: z.string(),
  org: z.number().nullable(),
  role: roleSchema,
  iat: z.number(),
  exp: z.number(),
  nbf: z.number().optional(),
  jti: z.string(),
  // The user's (or API client's) token_version when the token was issued; tokens issued before versions existed carry none (0).
  ver: z.number().int().optional(),
  // The token's scopes, space-separated (OAuth 2.0 style): an API client's always (tokens issued before
  // scopes existed carry none), a person's only when narrowed to fewer than the role allows.
  scope: z.string().max(200).optional(),
});
export type TokenClaims = z.infer<typeof tokenClaims>;

export type Principal = {
  /** null for an API client. */
  userId: number | null;
  /** The api_clients row id; null for a user. */
  apiClientId: number | null;
  /** The public client_id; null for a user. */
  clientId: string | null;
  orgId: number | null;
  /** The username, or an API client's name. */
  username: string;
  role: Role;
  subscriptionActive: boolean;
  /** The organisation's own cap on live lookups in flight; null: the service default. */
  maxInFlight: number | null;
  /** Set until a user given a password by someone else has chosen their own. */
  mustChangePassword: boolean;
  /** The token's scopes: an API client's always; a user's only when narrowed at the token endpoint, else null (the role decides). */
  scopes: readonly Scope[] | null;
  /** The addresses an API client may be used from; null or empty: any. */
  allowedIps: readonly string[] | null;
  /** Set for an administrator of an organisation that requires two-factor sign-in, until they enrol. */
  mfaEnrolmentRequired: boolean;
  tokenId: string;
  /** The token's exp (seconds since the epoch). */
  tokenExpiresAt: number;
};

export const meResponse = z.object({
  id: z.number().nullable().meta({ description: "The user's id; null for an API client" }),
  username: z.string().nullable().meta({ description: 'null for an API client' }),
  client_id: z.string().optional().meta({ description: 'Present for an API client' }),
  name: z.string().optional().meta({ description: "An API client's name" }),
  role: roleSchema,
  mfa_enabled: z.boolean().optional().meta({ description: "Whether the user's two-factor sign-in is on; absent for an API client" }),
  organisation: z
    .object({
      id: z.number(),
      org_number: z.number(),
      name: z.string(),
      subscription_active: z.boolean(),
      units: z.number().meta({ description: "The organisation's unit balance; every member sees it" }),
      tenancy: z.enum(['hosted', 'self-hosted']).optional().meta({ description: 'This and the fields below: for roles that keep the accounts (administrators, finance)' }),
      affiliate: z.boolean().optional(),
      reserved_units: z.number().optional(),
      lifetime_units: z.number().optional(),
      unit_cost: z.number().optional(),
      min_topup_units: z.number().optional(),
      loyalty_badge: z.enum(['silver', 'gold', 'diamond']).nullable().optional(),
    })
    .nullable(),
});
