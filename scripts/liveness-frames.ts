/**
 * Makes the sandbox's liveness frames from the public-domain portraits the identity simulator already
 * serves (src/simulators/identity-authority/faces, README there for sources and licences):
 *
 * - live: the portrait's face turned as a head turns. The 68 landmarks found by the face model get a
 *   depth each from a generic head (src/modules/liveness/head-model.ts), are rotated by a yaw and a
 *   pitch about an axis behind the face and projected back (orthographic); the image is then warped
 *   triangle by triangle (a Delaunay triangulation, by delaunator, of the landmarks, a few forehead
 *   points, a ring round the head that turns with it and the image's border, which stays) onto the new
 *   positions, far triangles first so that the nose hides what it should.
 * - flat: the whole portrait as a flat picture turned (or tilted) before a camera: a perspective
 *   homography, camera 2.5 image widths away, on a dark background.
 * - still: the front frame again, re-encoded at another JPEG quality (other bytes, the same picture).
 *
 * Each frame is then measured with the judging engine's own pose reading (src/modules/liveness/pose.ts),
 * written beside the frames as frames.json. Run: `node scripts/liveness-frames.ts` (about 20 s: it loads
 * the face model). Deterministic: the same portraits give the same frames.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Delaunator from 'delaunator';
import sharp from 'sharp';
import { createFaceEngine, DEFAULT_FACE_THRESHOLD } from '../src/modules/face/index.ts';
import { LANDMARK_DEPTH } from '../src/modules/liveness/head-model.ts';
import { poseFrom, shapeOf, type Point } from '../src/modules/liveness/pose.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const FACES = join(ROOT, 'src/simulators/identity-authority/faces');
export const LIVENESS_DIR = join(FACES, 'liveness');

const PEOPLE = [
  { key: 'grace-hopper', nin: '70000000001', file: 'grace-hopper.selfie.jpg' },
  { key: 'eileen-collins', nin: '70000000002', file: 'eileen-collins.selfie.jpg' },
] as const;

type Kind = 'live' | 'flat' | 'still';
type Plan = { name: string; step: 'front' | 'turn_left' | 'turn_right' | 'look_up'; kind: Kind; yaw: number; pitch: number };

/** Positive yaw: the person's own left (their nose toward the image's right edge); positive pitch: chin up. */
const PLANS: Plan[] = [
  { name: 'front', step: 'front', kind: 'live', yaw: 0, pitch: 0 },
  { name: 'turn_left-mid', step: 'turn_left', kind: 'live', yaw: 15, pitch: 0 },
  { name: 'turn_left', step: 'turn_left', kind: 'live', yaw: 35, pitch: 0 },
  { name: 'turn_right-mid', step: 'turn_right', kind: 'live', yaw: -15, pitch: 0 },
  { name: 'turn_right', step: 'turn_right', kind: 'live', yaw: -35, pitch: 0 },
  { name: 'look_up-mid', step: 'look_up', kind: 'live', yaw: 0, pitch: 10 },
  { name: 'look_up', step: 'look_up', kind: 'live', yaw: 0, pitch: 25 },
  { name: 'flat-turn_left', step: 'turn_left', kind: 'flat', yaw: 35, pitch: 0 },
  { name: 'flat-turn_right', step: 'turn_right', kind: 'flat', yaw: -35, pitch: 0 },
  { name: 'flat-look_up', step: 'look_up', kind: 'flat', yaw: 0, pitch: 25 },
  { name: 'still-turn_left', step: 'turn_left', kind: 'still', yaw: 0, pitch: 0 },
  { name: 'still-turn_right', step: 'turn_right', kind: 'still', yaw: 0, pitch: 0 },
  { name: 'still-look_up', step: 'look_up', kind: 'still', yaw: 0, pitch: 0 },
];

type Raw = { data: Uint8Array; width: number; height: number };

const QUALITY = 82;
const jpeg = (img: Raw, quality = QUALITY) => sharp(img.data, { raw: { width: img.width, height: img.height, channels: 3 } }).jpeg({ quality, mozjpeg: false }).toBuffer();

/** The colour at (x, y), bilinear; outside the image: the nearest edge. */
function sample(src: Raw, x: number, y: number, out: Uint8Array, at: number): void {
  const cx = Math.min(src.width - 1, Math.max(0, x));
  const cy = Math.min(src.height - 1, Math.max(0, y));
  const x0 = Math.floor(cx);
  const y0 = Math.floor(cy);
  const x1 = Math.min(src.width - 1, x0 + 1);
  const y1 = Math.min(src.height - 1, y0 + 1);
  const fx = cx - x0;
  const fy = cy - y0;
  for (let c = 0; c < 3; c++) {
    const a = src.data[(y0 * src.width + x0) * 3 + c]!;
    const b = src.data[(y0 * src.width + x1) * 3 + c]!;
    const d = src.data[(y1 * src.width + x0) * 3 + c]!;
    const e = src.data[(y1 * src.width + x1) * 3 + c]!;
    out[at + c] = Math.round((a * (1 - fx) + b * fx) * (1 - fy) + (d * (1 - fx) + e * fx) * fy);
  }
}

/** Each triangle of `to` filled from the same triangle of `from` (affine inside each), in the order given. */
function warpTriangles(src: Raw, from: Point[], to: Point[], triangles: number[][]): Raw {
  const out = new Uint8Array(src.data);
  for (const [i, j, k] of triangles as [number, number, number][]) {
    const [a, b, c] = [to[i]!, to[j]!, to[k]!];
    const det = (b.y - c.y) * (a.x - c.x) + (c.x - b.x) * (a.y - c.y);
    if (Math.abs(det) < 1e-6) continue;
    const minX = Math.max(0, Math.floor(Math.min(a.x, b.x, c.x)));
    const maxX = Math.min(src.width - 1, Math.ceil(Math.max(a.x, b.x, c.x)));
    const minY = Math.max(0, Math.floor(Math.min(a.y, b.y, c.y)));
    const maxY = Math.min(src.height - 1, Math.ceil(Math.max(a.y, b.y, c.y)));
    const [fa, fb, fc] = [from[i]!, from[j]!, from[k]!];
    for (let y = minY; y <= maxY; y++) {
      for (let x = minX; x <= maxX; x++) {
        const l1 = ((b.y - c.y) * (x - c.x) + (c.x - b.x) * (y - c.y)) / det;
        const l2 = ((c.y - a.y) * (x - c.x) + (a.x - c.x) * (y - c.y)) / det;
        const l3 = 1 - l1 - l2;
        if (l1 < -1e-3 || l2 < -1e-3 || l3 < -1e-3) continue;
        sample(src, l1 * fa.x + l2 * fb.x + l3 * fc.x, l1 * fa.y + l2 * fb.y + l3 * fc.y, out, (y * src.width + x) * 3);
      }
    }
  }
  return { data: out, width: src.width, height: src.height };
}

type Point3 = { x: number; y: number; z: number; fixed: boolean };

/** The landmarks with their depths, forehead points, a ring round the head (all turning) and the border (fixed). */
function headPoints(landmarks: readonly Point[], width: number, height: number): Point3[] {
  const halfJaw = (landmarks[16]!.x - landmarks[0]!.x) / 2;
  const eyes = Math.hypot(landmarks[45]!.x - landmarks[36]!.x, landmarks[45]!.y - landmarks[36]!.y);
  const pts: Point3[] = landmarks.map((p, i) => ({ x: p.x, y: p.y, z: LANDMARK_DEPTH[i]! * halfJaw, fixed: false }));
  // The forehead, above the brows: as deep as the brows, a little behind.
  for (const i of [17, 19, 21, 22, 24, 26]) pts.push({ x: landmarks[i]!.x, y: landmarks[i]!.y - 0.55 * eyes, z: (LANDMARK_DEPTH[i]! - 0.1) * halfJaw, fixed: false });
  const cx = landmarks.reduce((s, p) => s + p.x, 0) / landmarks.length;
  const cy = landmarks.reduce((s, p) => s + p.y, 0) / landmarks.length;
  const rx = 1.35 * Math.max(...landmarks.map((p) => Math.abs(p.x - cx)));
  const ry = 1.45 * Math.max(...landmarks.map((p) => Math.abs(p.y - cy)));
  for (let a = 0; a < 16; a++) {
    const t = (a / 16) * 2 * Math.PI;
    const x = cx + rx * Math.cos(t);
    const y = cy + ry * Math.sin(t);
    if (x > 2 && x < width - 3 && y > 2 && y < height - 3) pts.push({ x, y, z: -0.95 * halfJaw, fixed: false });
  }
  const far = -10 * halfJaw;
  for (const f of [0, 0.25, 0.5, 0.75]) {
    pts.push({ x: f * (width - 1), y: 0, z: far, fixed: true }, { x: width - 1, y: f * (height - 1), z: far, fixed: true });
    pts.push({ x: (1 - f) * (width - 1), y: height - 1, z: far, fixed: true }, { x: 0, y: (1 - f) * (height - 1), z: far, fixed: true });
  }
  return pts;
}

/** A head turned: yaw about a vertical axis one half-jaw behind the nose tip, then pitch about a horizontal one. */
function turned(pts: Point3[], landmarks: readonly Point[], yawDeg: number, pitchDeg: number): Point3[] {
  const halfJaw = (landmarks[16]!.x - landmarks[0]!.x) / 2;
  const x0 = landmarks[30]!.x;
  const y0 = landmarks[30]!.y;
  const z0 = -halfJaw;
  const t = (yawDeg * Math.PI) / 180;
  const p = (pitchDeg * Math.PI) / 180;
  return pts.map((q) => {
    if (q.fixed) return q;
    const x1 = x0 + (q.x - x0) * Math.cos(t) + (q.z - z0) * Math.sin(t);
    const z1 = z0 - (q.x - x0) * Math.sin(t) + (q.z - z0) * Math.cos(t);
    const y2 = y0 + (q.y - y0) * Math.cos(p) - (z1 - z0) * Math.sin(p);
    const z2 = z0 + (q.y - y0) * Math.sin(p) + (z1 - z0) * Math.cos(p);
    return { x: x1, y: y2, z: z2, fixed: false };
  });
}

function liveFrame(src: Raw, landmarks: readonly Point[], yaw: number, pitch: number): Raw {
  const pts = headPoints(landmarks, src.width, src.height);
  const moved = turned(pts, landmarks, yaw, pitch);
  const d = Delaunator.from(pts, (q) => q.x, (q) => q.y);
  const triangles: number[][] = [];
  for (let i = 0; i < d.triangles.length; i += 3) triangles.push([d.triangles[i]!, d.triangles[i + 1]!, d.triangles[i + 2]!]);
  // Far first: what is nearer the camera is drawn over it.
  const depth = (tri: number[]) => tri.reduce((s, i) => s + moved[i]!.z, 0);
  triangles.sort((a, b) => depth(a) - depth(b));
  return warpTriangles(src, pts, moved, triangles);
}

/** The picture as a flat print turned by yaw (or tilted by pitch) about its centre, seen by a camera 2.5 widths away. */
function flatFrame(src: Raw, yawDeg: number, pitchDeg: number): Raw {
  const out = new Uint8Array(src.width * src.height * 3).fill(40);
  const d = 2.5 * src.width;
  const t = (yawDeg * Math.PI) / 180;
  const p = (pitchDeg * Math.PI) / 180;
  const cx = src.width / 2;
  const cy = src.height / 2;
  for (let y = 0; y < src.height; y++) {
    for (let x = 0; x < src.width; x++) {
      // Inverse of x' = d u cos t / (d + u sin t) (and the same in v for a tilt): the print's point seen at (x, y).
      const X = x - cx;
      const Y = y - cy;
      let u = X;
      let v = Y;
      if (t !== 0) {
        u = (X * d) / (d * Math.cos(t) - X * Math.sin(t));
        v = (Y * (d + u * Math.sin(t))) / d;
      } else if (p !== 0) {
        v = (Y * d) / (d * Math.cos(p) + Y * Math.sin(p));
        u = (X * (d - v * Math.sin(p))) / d;
      }
      const sx = u + cx;
      const sy = v + cy;
      if (sx < 0 || sy < 0 || sx > src.width - 1 || sy > src.height - 1) continue;
      sample(src, sx, sy, out, (y * src.width + x) * 3);
    }
  }
  return { data: out, width: src.width, height: src.height };
}

export type FrameEntry = { file: string; step: Plan['step']; kind: Kind; made: { yaw: number; pitch: number }; measured: { yaw: number; pitch: number; outline_yaw: number; outline_pitch: number; movement: number; parallax: number; distance_to_front: number } };

async function main(): Promise<void> {
  const engine = await createFaceEngine();
  const sameFace = 0.6 + 0.05 * Math.log(100 / DEFAULT_FACE_THRESHOLD - 1);
  const sets: { key: string; nin: string; portrait: string; frames: FrameEntry[] }[] = [];
  for (const person of PEOPLE) {
    const { data, info } = await sharp(readFileSync(join(FACES, person.file))).rotate().removeAlpha().toColourspace('srgb').raw().toBuffer({ resolveWithObject: true });
    const src: Raw = { data: new Uint8Array(data), width: info.width, height: info.height };
    const found = await engine.frame(await jpeg(src, 95));
    if ('refusal' in found) throw new Error(`${person.key}: ${found.refusal}`);
    mkdirSync(join(LIVENESS_DIR, person.key), { recursive: true });
    const frames: FrameEntry[] = [];
    let front: { shape: ReturnType<typeof shapeOf>; descriptor: Float32Array } | null = null;
    for (const [n, plan] of PLANS.entries()) {
      const image =
        plan.kind === 'live' ? await jpeg(liveFrame(src, found.landmarks, plan.yaw, plan.pitch)) : plan.kind === 'flat' ? await jpeg(flatFrame(src, plan.yaw, plan.pitch)) : await jpeg(src, QUALITY + 2 * (n - PLANS.findIndex((q) => q.kind === 'still') + 1));
      const file = `${person.key}/${plan.name}.jpg`;
      writeFileSync(join(LIVENESS_DIR, file), image);
      const seen = await engine.frame(image);
      if ('refusal' in seen) throw new Error(`${file}: ${seen.refusal}`);
      const shape = shapeOf(seen.landmarks);
      front ??= { shape, descriptor: seen.descriptor };
      const pose = poseFrom(front.shape, shape);
      const r = (v: number, k = 1) => Math.round(v * 10 ** k) / 10 ** k;
      frames.push({
        file,
        step: plan.step,
        kind: plan.kind,
        made: { yaw: plan.yaw, pitch: plan.pitch },
        measured: { yaw: r(pose.yaw), pitch: r(pose.pitch), outline_yaw: r(pose.outlineYaw), outline_pitch: r(pose.outlinePitch), movement: r(pose.movement, 3), parallax: r(pose.parallax, 3), distance_to_front: r(engine.distance(seen.descriptor, front.descriptor), 3) },
      });
      console.log(file, JSON.stringify(frames.at(-1)!.measured));
    }
    sets.push({ key: person.key, nin: person.nin, portrait: person.file, frames });
  }
  const made = {
    made_by: 'scripts/liveness-frames.ts',
    same_face_distance: Math.round(sameFace * 1000) / 1000,
    yaw: "degrees from the front frame, positive to the person's own left (nose toward the image's right edge)",
    pitch: 'degrees from the front frame, positive chin up',
    sets,
  };
  writeFileSync(join(LIVENESS_DIR, 'frames.json'), `${JSON.stringify(made, null, 2)}\n`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  await main();
  process.exit(0);
}
