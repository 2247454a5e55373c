import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PORTRAITS } from './faces.ts';

/**
 * GET /sandbox/liveness: frames to try a liveness check with, per sandbox person (faces/liveness,
 * made by scripts/liveness-frames.ts from the public-domain portraits; README there). `live` passes in
 * any session order once its frames are sent in that order; `flat` (a print turned before a camera)
 * and `still` (the front picture again) show the refusals.
 */
const dir = join(import.meta.dirname, 'faces', 'liveness');

type Measured = { yaw: number; pitch: number };
type Made = { file: string; step: string; kind: 'live' | 'flat' | 'still'; made: Measured; measured: Measured };
type FramesJson = { sets: { nin: string; frames: Made[] }[] };

const HOW_MADE: Record<Made['kind'], string> = {
  live: "the portrait's face warped over a generic 3D head, turned 15 and 35 degrees to each side and raised 10 and 25 degrees (two frames per pose: mid-way and at the end)",
  flat: 'the whole portrait as a flat print turned 35 degrees (tilted 25) before a camera: a perspective homography',
  still: 'the front frame re-encoded at other JPEG qualities: other bytes, the same picture',
};

let cached: unknown;

export function sandboxLiveness() {
  cached ??= (() => {
    const made = JSON.parse(readFileSync(join(dir, 'frames.json'), 'utf8')) as FramesJson;
    return {
      data: PORTRAITS.flatMap((p) => {
        const set = made.sets.find((s) => s.nin === p.nin);
        if (!set) return [];
        const front = set.frames.find((f) => f.step === 'front')!;
        const framesOf = (kind: Made['kind']) =>
          [front, ...set.frames.filter((f) => f.kind === kind && f.step !== 'front')].map((f) => ({
            step: f.step,
            image: readFileSync(join(dir, f.file)).toString('base64'),
            made: { yaw: f.made.yaw, pitch: f.made.pitch },
            measured: { yaw: f.measured.yaw, pitch: f.measured.pitch },
          }));
        return [
          {
            nin: p.nin,
            subject: p.subject,
            licence: `${p.licence}; the frames derived from it likewise`,
            source: p.source,
            sets: (['live', 'flat', 'still'] as const).map((kind) => ({ kind, passes: kind === 'live', how_made: HOW_MADE[kind], frames: framesOf(kind) })),
          },
        ];
      }),
      made_by: 'scripts/liveness-frames.ts',
      yaw: "degrees from the front frame, positive to the person's own left (nose toward the image's right edge)",
      pitch: 'degrees from the front frame, positive chin up',
    };
  })();
  return cached;
}
