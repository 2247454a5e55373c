import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PORTRAITS } from './faces.ts';

/**
 * GET /sandbox/liveness: frames to try a liveness check with, per sandbox person (faces/liveness,
 * made by scripts/liveness-frames.ts from the public-domain portraits; README there). `live` passes in
 * any session order once its frames are sent in that order; `flat` (a print turned before a camera)
 * and `still` (the front picture again) show the refusals. Every answer's frames are other bytes (a
 * JPEG comment with a random salt after the start-of-image marker; the pixels untouched), so the same
 * few lines of shell pass a check each time they run: the service refuses bytes it has seen
 * (`frames_reused`).
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

/** The JPEG with a comment segment (FF FE, its length, the salt) right after its start-of-image marker. */
function salted(jpeg: Buffer, salt: Buffer): Buffer {
  const length = Buffer.alloc(2);
  length.writeUInt16BE(salt.length + 2);
  return Buffer.concat([jpeg.subarray(0, 2), Buffer.from([0xff, 0xfe]), length, salt, jpeg.subarray(2)]);
}

let cached: ReturnType<typeof read> | undefined;

export function sandboxLiveness() {
  cached ??= read();
  const salt = Buffer.from(`sandbox ${randomBytes(12).toString('hex')}`);
  return {
    ...cached,
    data: cached.data.map((p) => ({ ...p, sets: p.sets.map((set) => ({ ...set, frames: set.frames.map((f) => ({ ...f, image: salted(f.image, salt).toString('base64') })) })) })),
  };
}

/** The committed frames, read once. */
function read() {
  const made = JSON.parse(readFileSync(join(dir, 'frames.json'), 'utf8')) as FramesJson;
  return {
    data: PORTRAITS.flatMap((p) => {
      const set = made.sets.find((s) => s.nin === p.nin);
      if (!set) return [];
      const front = set.frames.find((f) => f.step === 'front')!;
      const framesOf = (kind: Made['kind']) =>
        [front, ...set.frames.filter((f) => f.kind === kind && f.step !== 'front')].map((f) => ({
          step: f.step,
          image: readFileSync(join(dir, f.file)),
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
}
