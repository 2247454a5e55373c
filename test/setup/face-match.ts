import { readFileSync } from 'node:fs';
import { sql, type DatabasePool } from 'slonik';
import { z } from 'zod';
import type { FaceEngine } from '../../src/modules/face/index.ts';

/** Grace Hopper's NIN at the identity simulator (a real portrait) and a selfie of her to send. */
export const HOPPER_NIN = '70000000001';
export const HOPPER_SELFIE = readFileSync('src/simulators/identity-authority/faces/grace-hopper.selfie.jpg').toString('base64');
export const faceConsent = () => ({ obtained_at: new Date().toISOString(), channel: 'mobile', notice_version: 'v1' });

const ledgerRow = z.object({ kind: z.string(), units_delta: z.coerce.number(), reference: z.string().nullable() });
const walletRow = z.object({ units: z.coerce.number(), reserved: z.coerce.number() });
const statusRow = z.object({ status: z.string(), failure_code: z.string().nullable(), holds_unit: z.boolean() });

/** What a face match test reads back: an organisation's ledger (no adjustments) and wallet, a verification's state. */
export function faceMatchReads(db: () => DatabasePool) {
  return {
    ledger: (orgId: number) => db().any(sql.type(ledgerRow)`SELECT kind, units_delta, reference FROM wallet_transactions WHERE org_id = ${orgId} AND kind <> 'adjustment' ORDER BY id`),
    wallet: (orgId: number) => db().one(sql.type(walletRow)`SELECT units, reserved FROM wallets WHERE org_id = ${orgId}`),
    verification: (ref: string) => db().one(sql.type(statusRow)`SELECT status, failure_code, holds_unit FROM verifications WHERE reference_id = ${ref}`),
  };
}

/**
 * A face engine of a test's own (no model loaded), for a face worker run in the test's process: it
 * accepts every selfie, and its reference photo step fails, hangs until released (then fails), or
 * answers a close match (distance 0.2), as `mode` says. `stopAfterNextSelfie` closes a worker right
 * after the next selfie it sees (a check): its job still ends, and no face worker runs after it.
 */
export function testFaceEngine() {
  let stopNext: (() => void) | null = null;
  const t = {
    mode: 'ok' as 'fail' | 'hang' | 'ok',
    referencesAsked: 0,
    hung: [] as (() => void)[],
    releaseHung() {
      for (const release of t.hung) release();
      t.hung = [];
    },
    /** Resolves once the worker has stopped, after the next selfie it checks. */
    stopAfterNextSelfie(worker: { close(): Promise<void> }): Promise<void> {
      return new Promise<void>((resolve, reject) => {
        stopNext = () => void worker.close().then(resolve, reject);
      });
    },
    engine: {
      async selfie() {
        const stop = stopNext;
        stopNext = null;
        // Not awaited: close waits for the job this selfie belongs to.
        stop?.();
        return { descriptor: new Float32Array(128) };
      },
      async reference() {
        t.referencesAsked++;
        if (t.mode === 'fail') throw new Error('face model failed (test engine)');
        if (t.mode === 'hang') {
          await new Promise<void>((resolve) => t.hung.push(resolve));
          throw new Error('released after its wait ran out (test engine)');
        }
        return new Float32Array(128);
      },
      distance: () => 0.2,
    } satisfies FaceEngine,
  };
  return t;
}

/**
 * A face engine of a test's own (no model loaded) that matches everything, and, while `holding`, keeps
 * every selfie it is given until `letGo()`: a face slot stays taken as long as the test needs.
 */
export function holdingFaceEngine() {
  let held: (() => void)[] = [];
  const t = {
    holding: false,
    selfiesSeen: 0,
    get held() {
      return held.length;
    },
    letGo() {
      t.holding = false;
      for (const release of held) release();
      held = [];
    },
    engine: {
      async selfie() {
        t.selfiesSeen++;
        if (t.holding) await new Promise<void>((resolve) => held.push(resolve));
        return { descriptor: new Float32Array(128) };
      },
      reference: async () => new Float32Array(128),
      distance: () => 0.2,
    } satisfies FaceEngine,
  };
  return t;
}
