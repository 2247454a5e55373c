import { z } from 'zod';

export const loginForm = z.object({
  username: z.string().min(1, 'username must not be empty').max(254),
  password: z.string().min(1, 'password must not be empty').max(1024),
  // OAuth 2.0 password flow: grant_type is optional here, but when sent it must say "password".
  grant_type: z.literal('password', { message: 'grant_type must be "password"' }).optional(),
  scope: z.string().optional(),
  client_id: z.string().optional(),
  client_secret: z.string().optional(),
});

export const tokenResponse = z.object({
  access_token: z.string(),
  token_type: z.literal('bearer'),
  expires_in: z.number().int(),
});

export const tokenClaims = z.object({
  sub: z.string(),
  org: z.number().nullable(),
  role: z.enum(['org_admin', 'member', 'platform_admin']),
  iat: z.number(),
  exp: z.number(),
  nbf: z.number().optional(),
  jti: z.string(),
});
export type TokenClaims = z.infer<typeof tokenClaims>;

export type Principal = {
  userId: number;
  orgId: number | null;
  username: string;
  role: 'org_admin' | 'member' | 'platform_admin';
  subscriptionActive: boolean;
  tokenId: string;
};

export const meResponse = z.object({
  id: z.number(),
  username: z.string(),
  role: z.enum(['org_admin', 'member', 'platform_admin']),
  organisation: z
    .object({
      id: z.number(),
      org_number: z.number(),
      name: z.string(),
      subscription_active: z.boolean(),
      tenancy: z.enum(['hosted', 'self-hosted']).optional(),
      affiliate: z.boolean().optional(),
      units: z.number().optional(),
      reserved_units: z.number().optional(),
      lifetime_units: z.number().optional(),
      unit_cost: z.number().optional(),
      min_topup_units: z.number().optional(),
      loyalty_badge: z.enum(['silver', 'gold', 'diamond']).nullable().optional(),
    })
    .nullable(),
});
