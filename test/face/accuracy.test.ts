import { readFileSync } from 'node:fs';
import sharp from 'sharp';
import { beforeAll, describe, expect, it } from 'vitest';
import { confidenceOf, createFaceEngine, DEFAULT_FACE_THRESHOLD, type FaceEngine } from '../../src/modules/face/index.ts';

/**
 * Each public-domain portrait against transformed copies of itself matches, and
 * the two people never match each other. The selfie side is each person's sandbox selfie (a loose crop
 * of the original); the other side is the whole original or its head crop (an authority-style photo),
 * transformed. The 120-px copies are of the head crop: a 120-px copy of the whole Eileen Collins scene
 * leaves a 20-px face that no detector finds, and an authority photo is a head crop. The distances are
 * printed (bench/RESULTS.md, Face match, keeps a run's table).
 */
const FACES = 'src/simulators/identity-authority/faces/';
const people = [
  { name: 'Grace Hopper', original: `${FACES}grace_hopper.jpg`, head: `${FACES}grace-hopper.reference.jpg`, selfie: `${FACES}grace-hopper.selfie.jpg` },
  { name: 'Eileen Collins', original: `${FACES}astronaut.png`, head: `${FACES}eileen-collins.reference.jpg`, selfie: `${FACES}eileen-collins.selfie.jpg` },
];

const transforms: [string, (p: (typeof people)[number]) => Promise<Buffer>][] = [
  ['original', async (p) => readFileSync(p.original)],
  ['crop 80 %', async (p) => {
    const m = await sharp(p.original).metadata();
    return sharp(p.original).extract({ left: Math.round(m.width * 0.1), top: Math.round(m.height * 0.05), width: Math.round(m.width * 0.8), height: Math.round(m.height * 0.85) }).toBuffer();
  }],
  ['head crop 120 px wide', (p) => sharp(p.head).resize({ width: 120 }).toBuffer()],
  ['head crop 120 px, JPEG q30', (p) => sharp(p.head).resize({ width: 120 }).jpeg({ quality: 30 }).toBuffer()],
  ['JPEG q30', (p) => sharp(p.original).jpeg({ quality: 30 }).toBuffer()],
  ['brightness +20 %', (p) => sharp(p.original).modulate({ brightness: 1.2 }).toBuffer()],
  ['brightness -20 %', (p) => sharp(p.original).modulate({ brightness: 0.8 }).toBuffer()],
  ['mirror', (p) => sharp(p.original).flop().toBuffer()],
  ['rotated 10 degrees', (p) => sharp(p.original).rotate(10, { background: '#808080' }).toBuffer()],
  ['rotated -10 degrees', (p) => sharp(p.original).rotate(-10, { background: '#808080' }).toBuffer()],
];

let engine: FaceEngine;
beforeAll(async () => {
  engine = await createFaceEngine();
}, 60_000);

describe('confidence mapping', () => {
  it('When the distance grows, then the confidence falls, from 100 to 0, with 75 at 0.545 and 50 at 0.6', () => {
    const ds = Array.from({ length: 151 }, (_, i) => i / 100);
    const cs = ds.map(confidenceOf);
    for (let i = 1; i < cs.length; i++) expect(cs[i]!).toBeLessThanOrEqual(cs[i - 1]!);
    expect(confidenceOf(0)).toBe(100);
    expect(confidenceOf(1.5)).toBe(0);
    expect(confidenceOf(0.545)).toBe(75);
    expect(confidenceOf(0.6)).toBe(50);
  });
});

describe('accuracy on the public-domain portraits', () => {
  it('When each person\'s selfie meets transformed copies of themselves, then all match; against the other person, none does', async () => {
    const lines: string[] = [];
    for (const person of people) {
      const selfie = await engine.selfie(readFileSync(person.selfie));
      if (!('descriptor' in selfie)) throw new Error(`${person.name}'s selfie refused: ${selfie.refusal}`);
      for (const [label, transform] of transforms) {
        for (const other of people) {
          const reference = await engine.reference(await transform(other));
          expect(reference, `${other.name}, ${label}: one face`).not.toBeNull();
          const d = engine.distance(selfie.descriptor, reference!);
          const same = other === person;
          lines.push(`${person.name} selfie vs ${other.name} ${label}: distance ${d.toFixed(3)}, confidence ${confidenceOf(d)}`);
          expect(confidenceOf(d) >= DEFAULT_FACE_THRESHOLD, `${person.name} vs ${other.name} ${label} (d=${d.toFixed(3)})`).toBe(same);
        }
      }
    }
    process.stdout.write(`${lines.join('\n')}\n`);
  }, 120_000);
});
