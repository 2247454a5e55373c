import { z } from 'zod';
import { orgRoleSchema } from '../../lib/roles.ts';

/** The platform administrators' view of one organisation: the one declaration of its shape. */
export const organisationView = z.object({
  id: z.number().int(),
  name: z.string(),
  tenancy: z.enum(['hosted', 'self-hosted']),
  affiliate: z.boolean(),
  subscription_active: z.boolean(),
  units: z.number().int().meta({ description: 'Settled balance in units' }),
  reserved_units: z.number().int().meta({ description: 'Units held by verifications in flight' }),
  lifetime_units: z.number().int().meta({ description: 'Units ever purchased (bonus units excluded); the loyalty badge follows it' }),
  loyalty_badge: z.enum(['silver', 'gold', 'diamond']).nullable().meta({ description: 'Self-hosted tenants only: 20,000 / 30,000 / 50,000 lifetime units' }),
  unit_cost: z.number().int().meta({ description: 'Price of one unit, kobo' }),
  min_topup_units: z.number().int(),
  max_in_flight: z.number().int().nullable().meta({ description: 'Cap on live lookups in flight; null: the service default' }),
  created_at: z.iso.datetime(),
  deleted_at: z.iso.datetime().nullable().meta({ description: 'Set when the organisation was retired' }),
  users: z.array(
    z.object({
      id: z.number().int(),
      username: z.string(),
      email: z.string().nullable(),
      role: orgRoleSchema,
      disabled: z.boolean(),
    }),
  ),
  last_topup: z
    .object({
      reference: z.string(),
      units: z.number().int(),
      bonus_units: z.number().int(),
      total_amount: z.number().int().meta({ description: 'Charged to the payer, kobo' }),
      paid_amount: z.number().int().nullable(),
      currency: z.string(),
      created_at: z.iso.datetime(),
      credited_at: z.iso.datetime(),
    })
    .nullable()
    .meta({ description: 'The most recent credited top-up; null if the organisation never topped up' }),
});
export type OrganisationView = z.infer<typeof organisationView>;

export const organisationPage = z.object({
  data: z.array(organisationView),
  next_cursor: z.string().nullable().meta({ description: 'Pass as `cursor` for the next page; null on the last page' }),
});
export type OrganisationPage = z.infer<typeof organisationPage>;

export const MAX_LIMIT = 200;
export const DEFAULT_LIMIT = 50;

export const pageQuery = z.object({
  limit: z
    .string()
    .regex(/^\d{1,4}$/, `limit must be an integer from 1 to ${MAX_LIMIT}`)
    .transform(Number)
    .refine((n) => n >= 1 && n <= MAX_LIMIT, `limit must be an integer from 1 to ${MAX_LIMIT}`)
    .optional(),
  cursor: z.string().max(100).optional().meta({ description: 'next_cursor of the previous page' }),
});
