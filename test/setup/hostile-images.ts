import sharp from 'sharp';

// Images sent to hurt a face worker (selfie format and decoding-limit tests).

/** The bomb that kept a face worker busy: six stacked feMorphology filters on a 6000 x 6000 canvas (366 bytes). */
export const SVG_BOMB = Buffer.from(
  `<svg xmlns="http://www.w3.org/2000/svg" width="6000" height="6000"><filter id="a"><feMorphology radius="3000"/></filter><filter id="b"><feMorphology radius="3000"/></filter><filter id="c"><feMorphology radius="3000"/></filter><filter id="d"><feMorphology radius="3000"/></filter><filter id="e"><feMorphology radius="3000"/></filter><filter id="f"><feMorphology radius="3000"/></filter><g filter="url(#a)"><g filter="url(#b)"><g filter="url(#c)"><g filter="url(#d)"><g filter="url(#e)"><rect width="6000" height="6000" filter="url(#f)"/></g></g></g></g></g></svg>`,
);

/** A small image of one colour, to encode in any format. */
export const swatch = (side = 16) => sharp({ create: { width: side, height: side, channels: 3, background: { r: 200, g: 120, b: 40 } } });

/**
 * A valid JPEG of `side` x `side` pixels of one colour: a few hundred kilobytes that decode to
 * side^2 pixels (libvips streams the encoding, so making it holds no such buffer).
 */
export const hugeJpeg = (side: number) => swatch(side).jpeg({ quality: 1, progressive: true, chromaSubsampling: '4:2:0' }).toBuffer();

/**
 * The same JPEG whose frame header (SOF) declares other dimensions: what a decoder reads before any
 * pixel, so a limit on input pixels refuses it there.
 */
export function withDeclaredSize(jpeg: Buffer, width: number, height: number): Buffer {
  const out = Buffer.from(jpeg);
  for (let i = 2; i + 9 < out.length; ) {
    if (out[i] !== 0xff) throw new Error('not a JPEG marker');
    const marker = out[i + 1]!;
    // SOF0..SOF15 except DHT (C4), JPG (C8) and DAC (CC): precision, height, width follow the length.
    if (marker >= 0xc0 && marker <= 0xcf && ![0xc4, 0xc8, 0xcc].includes(marker)) {
      out.writeUInt16BE(height, i + 5);
      out.writeUInt16BE(width, i + 7);
      return out;
    }
    i += 2 + out.readUInt16BE(i + 2);
  }
  throw new Error('no frame header');
}
