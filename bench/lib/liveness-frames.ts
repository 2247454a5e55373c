import { readFileSync } from 'node:fs';
import { repoPath } from './proc.ts';

/**
 * The sandbox's live frames of Grace Hopper (src/simulators/identity-authority/faces/liveness, the
 * portrait of the fixture NIN 12345678903), made distinct for each liveness check of a bench: the
 * service keeps every frame's keyed hash and answers `frames_reused` to a frame sent again, so each
 * check needs bytes never sent before. A JPEG comment segment (FF FE) right after the start-of-image
 * marker, holding the run's salt and the check's number, changes the bytes and leaves the pixels, so
 * what is judged is the same for every check. Sets are made before anything is measured, and the
 * floor (ceilings/liveness-floor.ts) reads sets made by the same function from the same salt.
 */
const DIR = repoPath('src/simulators/identity-authority/faces/liveness/grace-hopper');
export const FRAME_NAMES = ['front', 'turn_left-mid', 'turn_left', 'turn_right-mid', 'turn_right', 'look_up-mid', 'look_up'] as const;
export type Challenge = 'turn_left' | 'turn_right' | 'look_up';
/** One check's frames, by name. */
export type FrameSet = Record<(typeof FRAME_NAMES)[number], Buffer>;

const originals = Object.fromEntries(FRAME_NAMES.map((n) => [n, readFileSync(`${DIR}/${n}.jpg`)])) as FrameSet;

/** The n-th check's frames of a run (salt): the same bytes in the bench and in its floor. */
export function frameSet(salt: string, n: number): FrameSet {
  return Object.fromEntries(
    FRAME_NAMES.map((name) => {
      const jpeg = originals[name];
      const note = Buffer.from(`bench ${salt} ${n} ${name}`, 'ascii');
      const segment = Buffer.concat([Buffer.from([0xff, 0xfe, (note.length + 2) >> 8, (note.length + 2) & 0xff]), note]);
      return [name, Buffer.concat([jpeg.subarray(0, 2), segment, jpeg.subarray(2)])];
    }),
  ) as FrameSet;
}

/** The frames in the session's order: front, then each challenge's mid-pose and end frames, 400 ms apart. */
export function sequence<T>(set: Record<(typeof FRAME_NAMES)[number], T>, challenges: readonly Challenge[]): { step: 'front' | Challenge; image: T; captured_at_ms: number }[] {
  const frames: { step: 'front' | Challenge; image: T; captured_at_ms: number }[] = [{ step: 'front', image: set.front, captured_at_ms: 1000 }];
  for (const c of challenges) for (const name of [`${c}-mid`, c] as const) frames.push({ step: c, image: set[name], captured_at_ms: frames.at(-1)!.captured_at_ms + 400 });
  return frames;
}
