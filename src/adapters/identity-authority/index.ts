import { createDojahAuthority } from './dojah.ts';
import { createPremblyAuthority } from './prembly.ts';
import { createSandboxAuthority } from './sandbox.ts';
import type { IdentityAuthority } from './types.ts';

export type { DemographyQuery, IdentityAuthority, NinQuery, PhoneQuery, Reason, UpstreamOutcome, VninQuery, VninRefusal } from './types.ts';
export { UpstreamError, VNIN_REFUSALS } from './types.ts';

export type IdentityAuthorityDialect = 'sandbox' | 'prembly' | 'dojah';

export interface IdentityAuthorityConfig {
  dialect: IdentityAuthorityDialect;
  baseUrl: string;
  apiKey: string;
  /** Prembly `app-id` (optional there); Dojah `AppId` (required). */
  appId?: string;
  timeoutMs: number;
}

export function createIdentityAuthority(cfg: IdentityAuthorityConfig): IdentityAuthority {
  switch (cfg.dialect) {
    case 'sandbox':
      return createSandboxAuthority({ baseUrl: cfg.baseUrl, apiKey: cfg.apiKey, timeoutMs: cfg.timeoutMs });
    case 'prembly':
      return createPremblyAuthority({ baseUrl: cfg.baseUrl, apiKey: cfg.apiKey, appId: cfg.appId, timeoutMs: cfg.timeoutMs });
    case 'dojah':
      if (!cfg.appId) throw new Error('identity authority: the dojah dialect needs an appId');
      return createDojahAuthority({ baseUrl: cfg.baseUrl, apiKey: cfg.apiKey, appId: cfg.appId, timeoutMs: cfg.timeoutMs });
    default: {
      const unknown: never = cfg.dialect;
      throw new Error(`identity authority: unknown dialect ${String(unknown)}`);
    }
  }
}
