import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

// A liveness check's frames as a face match sends them over HTTP (base64), from the sandbox's synthetic
// frames (scripts/liveness-frames.ts): a head turned as a session asks, or a flat picture, or stills.

const DIR = join(import.meta.dirname, '../../src/simulators/identity-authority/faces/liveness');

export type Challenge = 'turn_left' | 'turn_right' | 'look_up';
export type Frame = { step: string; image: string; captured_at_ms: number };

/**
 * A committed frame made unique: a JPEG comment segment (random bytes) right after the start-of-image
 * marker leaves the pixels alone, so frames_reused (keyed hashes, kept across requests) never fires
 * between tests that send the same picture.
 */
export function livenessFrame(person: string, name: string): string {
  const jpeg = readFileSync(join(DIR, person, `${name}.jpg`));
  const note = randomBytes(16);
  const segment = Buffer.concat([Buffer.from([0xff, 0xfe, 0x00, note.length + 2]), note]);
  return Buffer.concat([jpeg.subarray(0, 2), segment, jpeg.subarray(2)]).toString('base64');
}

/** front, then per challenge its mid-pose and end frames (or a flat / still one), `gapMs` apart. */
export function livenessSequence(challenges: readonly Challenge[], o: { person?: string; turnsOf?: string; kind?: 'live' | 'flat' | 'still'; gapMs?: number; label?: readonly Challenge[] } = {}): Frame[] {
  const person = o.person ?? 'grace-hopper';
  const gap = o.gapMs ?? 400;
  const frames: Frame[] = [{ step: 'front', image: livenessFrame(person, 'front'), captured_at_ms: 1000 }];
  challenges.forEach((c, i) => {
    const names = o.kind === 'flat' ? [`flat-${c}`] : o.kind === 'still' ? [`still-${c}`] : [`${c}-mid`, c];
    for (const name of names) frames.push({ step: (o.label ?? challenges)[i]!, image: livenessFrame(o.turnsOf ?? person, name), captured_at_ms: frames.at(-1)!.captured_at_ms + gap });
  });
  return frames;
}
