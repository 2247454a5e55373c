import { z } from 'zod';
import { usernameSchema } from './usernames.ts';
import { roleSchema } from '../../lib/roles.ts';

export const tenancySchema = z.enum(['hosted', 'self-hosted']);
export type Tenancy = z.infer<typeof tenancySchema>;

export { roleSchema, type Role } from '../../lib/roles.ts';

const int = z.union([z.number(), z.bigint(), z.string()]).transform((v) => Number(v));

export const organisationRow = z.object({
  id: int,
  name: z.string(),
  tenancy: tenancySchema,
  affiliate: z.boolean(),
  unit_cost_kobo: int,
  min_topup_units: int,
  subscription_active: z.boolean(),
  lifetime_units: int,
  business_registration_ref: z.string(),
  data_protection_ref: z.string(),
  billing_email: z.string().nullable(),
  created_at: z.union([z.number(), z.string(), z.date()]).transform((v) => new Date(v).toISOString()),
  deleted_at: z.union([z.number(), z.string(), z.date()]).nullable().transform((v) => (v === null ? null : new Date(v).toISOString())),
  units: int,
  reserved: int,
  /** Cap on live lookups in flight; null: the service default (ORG_MAX_IN_FLIGHT). */
  max_in_flight: int.nullable(),
});
export type OrganisationRow = z.infer<typeof organisationRow>;

export const userRow = z.object({
  id: int,
  org_id: int.nullable(),
  username: z.string(),
  email: z.string().nullable(),
  role: roleSchema,
  disabled: z.boolean(),
  must_change_password: z.boolean(),
});
export type UserRow = z.infer<typeof userRow>;

export const createOrganisationInput = z.object({
  name: z.string().trim().min(1).max(200),
  tenancy: tenancySchema,
  affiliate: z.boolean().default(false),
  businessRegistration: z.string().trim().min(1, 'business-registration document reference is required'),
  dataProtection: z.string().trim().min(1, 'data-protection document reference is required'),
  unitCostKobo: z.number().int().positive().optional(),
  minTopupUnits: z.number().int().positive().multipleOf(100, 'must be a multiple of 100').optional(),
  billingEmail: z.email().optional(),
});
export type CreateOrganisationInput = z.input<typeof createOrganisationInput>;

export const createUserInput = z.object({
  orgId: z.number().int().positive().nullable(),
  username: usernameSchema,
  password: z
    .string()
    .min(8, 'password must be at least 8 characters')
    .max(1024)
    .refine((p) => !/\p{Cc}/u.test(p), 'must not contain control characters'),
  role: roleSchema,
  email: z.email().optional(),
  /** Must the user change this password at first login? Default: yes for organisation users. */
  requirePasswordChange: z.boolean().optional(),
});
export type CreateUserInput = z.input<typeof createUserInput>;
