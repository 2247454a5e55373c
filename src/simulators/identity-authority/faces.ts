import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Real portraits for the face match sandbox (README: Face match). Each person's NIN answers with a
 * passport-style head crop (200 px wide, JPEG quality 70, like an authority's photo) and
 * `GET /sandbox/faces` gives another, looser crop of the same person to send as a selfie. Both were cut
 * from the public-domain originals in faces/ (faces/README.md: sources and licences).
 */
export type Portrait = { nin: string; subject: string; firstName: string; lastName: string; gender: 'f' | 'm'; licence: string; source: string; reference: string; selfie: string };

const dir = join(import.meta.dirname, 'faces');
const base64 = (file: string) => readFileSync(join(dir, file)).toString('base64');

export const PORTRAITS: readonly Portrait[] = [
  {
    nin: '70000000001',
    subject: 'Grace Hopper',
    firstName: 'Grace',
    lastName: 'Hopper',
    gender: 'f',
    licence: 'Public domain (photograph by the United States Navy)',
    source: 'Debian package python-matplotlib-data, usr/share/matplotlib/mpl-data/sample_data/grace_hopper.jpg',
    reference: base64('grace-hopper.reference.jpg'),
    selfie: base64('grace-hopper.selfie.jpg'),
  },
  {
    nin: '70000000002',
    subject: 'Eileen Collins',
    firstName: 'Eileen',
    lastName: 'Collins',
    gender: 'f',
    licence: 'Public domain (NASA: "No known copyright restrictions")',
    source: 'Debian package python3-skimage, skimage/data/astronaut.png',
    reference: base64('eileen-collins.reference.jpg'),
    selfie: base64('eileen-collins.selfie.jpg'),
  },
];

export function portraitOf(nin: string): Portrait | undefined {
  return PORTRAITS.find((p) => p.nin === nin);
}

/** GET /sandbox/faces: whom to try a match (their selfie with their NIN) and a mismatch (with another's) with. */
export function sandboxFaces() {
  return { data: PORTRAITS.map((p) => ({ nin: p.nin, subject: p.subject, licence: p.licence, source: p.source, selfie: p.selfie })) };
}
