import { z } from 'zod';
import { instant } from '../../lib/instant.ts';
import { SCOPES } from '../../lib/api-scopes.ts';
import { orgRoleSchema } from '../../lib/roles.ts';

// Missing fields and wrong types answer 422 (parseInput); the rules on a new password answer 400
// from password-rules.ts, each naming the rule.
const password = z.string().max(1024, 'password is too long');

/** Turning two-factor sign-in off: a current code (or a recovery code) and the current password. */
export const disableMfaBody = z.object({
  code: z.string().min(1, 'code must not be empty').max(64, 'code is too long'),
  current_password: password,
});

export const changePasswordBody = z.object({
  current_password: password,
  new_password: password,
});

export const forgotPasswordBody = z.object({
  username: z.string().max(254, 'username is too long'),
});

export const resetPasswordBody = z.object({
  token: z.string().max(200, 'token is too long'),
  new_password: password,
});

export const detailResponse = z.object({ detail: z.string() });

export const apiClientRole = orgRoleSchema;

export const createApiClientBody = z.object({
  name: z.string().trim().min(1, 'name must not be empty').max(100, 'name is too long'),
  role: z.string().pipe(apiClientRole),
  scopes: z.array(z.string().max(40)).max(10).optional().meta({ description: 'From verify, requery, history:read, topup, webhooks, links (topup only for org_admin and finance, webhooks and links only for org_admin). Default: all the role allows' }),
  allowed_ips: z
    .array(z.string().max(64))
    .max(50)
    .optional()
    .meta({ description: 'IPv4/IPv6 addresses and CIDR ranges the client may be used from (no zone ids such as `%eth0`). Default: any. An entry that matches every address (`0.0.0.0/0`, `::/0`, `::`, any /0) needs `allow_any: true`' }),
  allow_any: z.boolean().optional().meta({ description: 'Set to true to confirm an `allowed_ips` entry that matches every address. Default: false' }),
  expires_at: instant.optional().meta({ description: 'When the client stops working: an ISO 8601 date-time with a zone (`Z` or an offset), on a real calendar date, in the future. Default: never' }),
});

export const apiClient = z.object({
  client_id: z.string(),
  name: z.string(),
  role: orgRoleSchema,
  created_at: z.string(),
  last_used_at: z.string().nullable().meta({ description: 'When the client last obtained a token; null: never' }),
  scopes: z.array(z.enum(SCOPES as [(typeof SCOPES)[number], ...(typeof SCOPES)[number][]])),
  allowed_ips: z.array(z.string()).meta({ description: 'Empty: any address' }),
  expires_at: z.string().nullable().meta({ description: 'null: never expires' }),
});

export const createdApiClient = apiClient.omit({ last_used_at: true }).extend({
  client_secret: z.string().meta({ description: 'Shown once: only its digest is stored' }),
});

/** A client as listed (and as answered by adopt): who vouches for it, and whether it may act. */
export const listedApiClient = apiClient.extend({
  created_by: z
    .object({ id: z.number().int(), username: z.string() })
    .nullable()
    .meta({ description: 'The administrator the client acts for (its creator, or who adopted it); null when unknown' }),
  status: z.enum(['active', 'suspended']).meta({
    description: '`suspended` while `created_by` is disabled or no longer an organisation administrator: its tokens are refused until another administrator adopts it',
  }),
});

export const apiClientList = z.object({ data: z.array(listedApiClient) });

export const CLIENT_ID_RE = /^cli_[0-9a-f]{24}$/;

/** A path naming an API client: the routes' check (anything else is not found) and the OpenAPI document's pattern. */
export const apiClientPathParams = z.object({ client_id: z.string().regex(CLIENT_ID_RE).meta({ example: 'cli_0123456789abcdef01234567' }) });
