import { z } from 'zod';

// Missing fields and wrong types answer 422 (parseInput); the rules on a new password answer 400
// from password-rules.ts, each naming the rule.
const password = z.string().max(1024, 'password is too long');

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

export const apiClientRole = z.enum(['member', 'org_admin'], { message: 'role must be "member" or "org_admin"' });

export const createApiClientBody = z.object({
  name: z.string().trim().min(1, 'name must not be empty').max(100, 'name is too long'),
  role: z.string().pipe(apiClientRole),
});

export const apiClient = z.object({
  client_id: z.string(),
  name: z.string(),
  role: z.enum(['member', 'org_admin']),
  created_at: z.string(),
  last_used_at: z.string().nullable().meta({ description: 'When the client last obtained a token; null: never' }),
});

export const createdApiClient = apiClient.omit({ last_used_at: true }).extend({
  client_secret: z.string().meta({ description: 'Shown once: only its digest is stored' }),
});

export const apiClientList = z.object({ data: z.array(apiClient) });

export const CLIENT_ID_RE = /^cli_[0-9a-f]{24}$/;
