/**
 * What the PDF standard fonts (Helvetica, Courier) can draw: the built-in fonts need no font file on
 * the server, but only cover WinAnsi. Shared by every PDF the service prints (slips, invoices,
 * statements).
 */

// Characters WinAnsi adds to printable ASCII and Latin-1.
const WIN_ANSI_EXTRA = new Set('€‚ƒ„…†‡ˆ‰Š‹ŒŽ‘’“”•–—˜™š›œžŸ');

const graphemes = new Intl.Segmenter('en', { granularity: 'grapheme' });

function drawable(ch: string): boolean {
  const code = ch.codePointAt(0)!;
  return (code >= 0x20 && code <= 0x7e) || (code >= 0xa0 && code <= 0xff) || WIN_ANSI_EXTRA.has(ch);
}

/**
 * A letter outside WinAnsi (Yoruba's ọ, ẹ, ṣ) is printed without its mark rather than as a wrong
 * glyph; the JSON record keeps it.
 */
export function printable(value: string): string {
  let out = '';
  for (const { segment } of graphemes.segment(value.normalize('NFC'))) {
    if ([...segment].every(drawable)) {
      out += segment;
      continue;
    }
    const base = segment.normalize('NFD').replace(/\p{M}/gu, '');
    out += base !== '' && [...base].every(drawable) ? base : '?';
  }
  return out;
}

/**
 * An amount in kobo as naira for a printed page: `NGN 11,015.23`. The sign ₦ is not in WinAnsi, so
 * PDFs name the currency by its ISO code (the portal shows ₦).
 */
export function nairaText(kobo: number): string {
  const abs = Math.abs(kobo);
  return `${kobo < 0 ? '-' : ''}NGN ${Math.floor(abs / 100).toLocaleString('en-US')}.${String(abs % 100).padStart(2, '0')}`;
}
