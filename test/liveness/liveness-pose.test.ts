import { describe, expect, it } from 'vitest';
import { LANDMARK_DEPTH } from '../../src/modules/liveness/head-model.ts';
import { poseFrom, shapeOf, yawOf, type Point } from '../../src/modules/liveness/pose.ts';

/**
 * The pose reading's geometry on an exact head: a symmetric face whose 68 landmarks stand at the
 * generic head's depths, turned and tilted by known angles and projected without a camera's
 * perspective. A head gives its angles back; a flat picture narrowed the same way gives a narrowing
 * and no nose angle (what flat_image reads). No model runs: this is the arithmetic alone.
 */
type P3 = { x: number; y: number; z: number };

function face(): P3[] {
  const pts: P3[] = [];
  for (let i = 0; i <= 16; i++) pts.push({ x: -Math.cos((Math.PI * i) / 16), y: 0.2 + 1.1 * Math.sin((Math.PI * i) / 16), z: 0 });
  for (let i = 0; i < 5; i++) pts.push({ x: -0.8 + 0.16 * i, y: -0.25, z: 0 });
  for (let i = 0; i < 5; i++) pts.push({ x: 0.16 + 0.16 * i, y: -0.25, z: 0 });
  for (let i = 0; i < 4; i++) pts.push({ x: 0, y: 0.1 + 0.15 * i, z: 0 });
  for (let i = 0; i < 5; i++) pts.push({ x: -0.15 + 0.075 * i, y: 0.6, z: 0 });
  const eye = (cx: number, mirror: boolean) => [180, 120, 60, 0, -60, -120].map((a) => ({ x: cx + (mirror ? -1 : 1) * 0.12 * Math.cos((a * Math.PI) / 180), y: -0.05 * Math.sin((a * Math.PI) / 180), z: 0 }));
  pts.push(...eye(-0.45, false), ...eye(0.45, true));
  for (let i = 0; i < 12; i++) pts.push({ x: -0.35 * Math.cos((i * Math.PI) / 6), y: 0.9 - 0.12 * Math.sin((i * Math.PI) / 6), z: 0 });
  for (let i = 0; i < 8; i++) pts.push({ x: -0.25 * Math.cos((i * Math.PI) / 4), y: 0.9 - 0.05 * Math.sin((i * Math.PI) / 4), z: 0 });
  return pts.map((p, i) => ({ ...p, z: LANDMARK_DEPTH[i]! }));
}

const rad = (d: number) => (d * Math.PI) / 180;
/** Yaw (to the person's left) about an axis one half jaw behind the nose, then pitch (chin up); projected. */
function turned(pts: P3[], yaw: number, pitch: number): Point[] {
  return pts.map((p) => {
    const x = p.x * Math.cos(rad(yaw)) + (p.z + 1) * Math.sin(rad(yaw));
    const z = -p.x * Math.sin(rad(yaw)) + (p.z + 1) * Math.cos(rad(yaw)) - 1;
    return { x: 200 + 100 * x, y: 200 + 100 * (p.y * Math.cos(rad(pitch)) - (z + 1) * Math.sin(rad(pitch))) };
  });
}

describe('the pose read from 68 landmarks', () => {
  const head = face();
  const front = shapeOf(turned(head, 0, 0));

  it('When an exact head faces the camera, then its yaw is 0; turned by 10, 20 or 35 degrees either way, the yaw read is that turn, and the outline narrows as much', () => {
    expect(yawOf(front)).toBeCloseTo(0, 6);
    for (const yaw of [10, 20, 35, -20, -35]) {
      const pose = poseFrom(front, shapeOf(turned(head, yaw, 0)));
      expect(pose.yaw).toBeCloseTo(yaw, 6);
      expect(Math.abs(pose.pitch)).toBeLessThan(0.5);
      expect(pose.outlineYaw).toBeCloseTo(Math.abs(yaw), 0);
    }
  });

  it('When the chin comes up by 12 or 25 degrees, then the pitch read is that tilt', () => {
    for (const pitch of [12, 25]) {
      const pose = poseFrom(front, shapeOf(turned(head, 0, pitch)));
      expect(pose.pitch).toBeCloseTo(pitch, 6);
      expect(Math.abs(pose.yaw)).toBeLessThan(1e-6);
    }
  });

  it('When the head is rolled (the camera tilted), then yaw and pitch do not change', () => {
    const rolled = turned(head, 25, 0).map((p) => ({ x: 200 + (p.x - 200) * Math.cos(0.3) - (p.y - 200) * Math.sin(0.3), y: 200 + (p.x - 200) * Math.sin(0.3) + (p.y - 200) * Math.cos(0.3) }));
    expect(poseFrom(front, shapeOf(rolled)).yaw).toBeCloseTo(25, 6);
  });

  it('When the front picture is narrowed or shortened as a flat print turned or tilted by 35 degrees, then the outline reads the turn and the nose reads none (well under half of it)', () => {
    const flat = turned(head, 0, 0);
    const narrowed = shapeOf(flat.map((p) => ({ x: 200 + (p.x - 200) * Math.cos(rad(35)), y: p.y })));
    const turn = poseFrom(front, narrowed);
    expect(turn.outlineYaw).toBeCloseTo(35, 6);
    expect(Math.abs(turn.yaw)).toBeLessThan(1e-6);
    expect(turn.parallax).toBeLessThan(1e-9);
    const shortened = shapeOf(flat.map((p) => ({ x: p.x, y: 200 + (p.y - 200) * Math.cos(rad(35)) })));
    const tilt = poseFrom(front, shortened);
    expect(tilt.outlinePitch).toBeGreaterThan(30);
    expect(Math.abs(tilt.pitch)).toBeLessThan(0.5 * tilt.outlinePitch);
    // A head turned as far is not affine: its nose stands out (parallax).
    expect(poseFrom(front, shapeOf(turned(head, 35, 0))).parallax).toBeGreaterThan(0.05);
  });
});
