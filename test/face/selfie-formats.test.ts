import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { imageFormatOf } from '../../src/modules/face/rules.ts';
import { SVG_BOMB, swatch } from '../setup/hostile-images.ts';

/**
 * Which selfie bytes reach a decoder: JPEG, PNG and WebP, told by their first bytes. sharp would also
 * read SVG, TIFF, GIF, AVIF and HEIF (it picks its loader from the content): each is refused, whatever
 * a data: prefix or a file name claimed. The samples are made here, by sharp, or written by hand.
 */
const pixels = () => swatch();

/** An ISO-BMFF box `ftyp` with the given brand: how HEIF (heic, mif1) and AVIF files begin. */
const ftyp = (brand: string) => Buffer.concat([Buffer.from([0, 0, 0, 0x18]), Buffer.from(`ftyp${brand}`), Buffer.from([0, 0, 0, 0]), Buffer.from(`mif1${brand}`)]);

describe('selfie formats told by their bytes', () => {
  it('When the bytes are a JPEG, a PNG or a WebP, then their format is named', async () => {
    expect(imageFormatOf(await pixels().jpeg().toBuffer())).toBe('jpeg');
    expect(imageFormatOf(await pixels().png().toBuffer())).toBe('png');
    expect(imageFormatOf(await pixels().webp().toBuffer())).toBe('webp');
    expect(imageFormatOf(await pixels().webp({ lossless: true }).toBuffer())).toBe('webp');
  });

  it('When the bytes are a GIF, a TIFF, an SVG, an AVIF or a HEIF, then they are refused (null) though sharp reads several of them', async () => {
    const refused: Record<string, Buffer> = {
      gif: await pixels().gif().toBuffer(),
      tiff: await pixels().tiff().toBuffer(),
      svg: SVG_BOMB,
      svgWithDeclaration: Buffer.concat([Buffer.from('<?xml version="1.0"?>'), SVG_BOMB]),
      avif: await pixels().avif().toBuffer(),
      heic: Buffer.concat([ftyp('heic'), Buffer.alloc(64)]),
      empty: Buffer.alloc(0),
      text: Buffer.from('not an image at all'),
      // A RIFF that is not a WebP (a WAV), and a truncated JPEG marker.
      wav: Buffer.concat([Buffer.from('RIFF'), Buffer.alloc(4), Buffer.from('WAVEfmt ')]),
      twoBytes: Buffer.from([0xff, 0xd8]),
    };
    // The samples are what they claim: sharp itself names them.
    expect((await sharp(refused.gif).metadata()).format).toBe('gif');
    expect((await sharp(refused.tiff).metadata()).format).toBe('tiff');
    expect((await sharp(refused.avif).metadata()).format).toBe('heif');
    expect((await sharp(SVG_BOMB).metadata()).format).toBe('svg');
    for (const [name, bytes] of Object.entries(refused)) expect(imageFormatOf(bytes), name).toBeNull();
  });
});
