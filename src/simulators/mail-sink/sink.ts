import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

/**
 * The sandbox's mail sink: a local SMTP server that keeps the e-mails the service sends (password
 * resets, receipts, alerts) in memory, so someone trying the sandbox can read them at the identity
 * simulator's `GET /sandbox/mail`. Nothing leaves the machine; nothing is logged. Sandbox only:
 * `npm start` runs it when SMTP_URL is empty.
 */

export type SandboxMail = {
  id: number;
  received_at: string;
  from: string;
  to: string[];
  subject: string;
  /** The text part, transfer encoding undone. */
  text: string;
};

export type MailSink = {
  port: number;
  /** For SMTP_URL: plain SMTP on loopback, no TLS attempted. */
  url: string;
  /** Newest first. */
  list(): SandboxMail[];
  close(): Promise<void>;
};

/** The sink keeps this many messages; older ones are dropped. */
const KEEP = 200;
const MAX_MESSAGE_BYTES = 2 * 1024 * 1024;

export async function startMailSink(opts: { host?: string; port?: number } = {}): Promise<MailSink> {
  const { host = '127.0.0.1', port = 0 } = opts;
  const messages: SandboxMail[] = [];
  let nextId = 1;
  const server = new SMTPServer({
    secure: false,
    authOptional: true,
    disabledCommands: ['AUTH', 'STARTTLS'],
    logger: false,
    size: MAX_MESSAGE_BYTES,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const parsed = parseMessage(Buffer.concat(chunks).toString('utf8'));
        messages.unshift({
          id: nextId++,
          received_at: new Date().toISOString(),
          from: parsed.from || (session.envelope.mailFrom ? session.envelope.mailFrom.address : ''),
          to: session.envelope.rcptTo.map((r) => r.address),
          subject: parsed.subject,
          text: parsed.text,
        });
        messages.length = Math.min(messages.length, KEEP);
        callback();
      });
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const bound = (server.server.address() as AddressInfo).port;
  return {
    port: bound,
    url: `smtp://${host}:${bound}?ignoreTLS=true`,
    list: () => messages.slice(),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

type Part = { headers: Map<string, string>; body: string };

function splitPart(raw: string): Part {
  const at = raw.search(/\r?\n\r?\n/);
  const head = at < 0 ? raw : raw.slice(0, at);
  const body = at < 0 ? '' : raw.slice(at).replace(/^\r?\n\r?\n/, '');
  const headers = new Map<string, string>();
  // Folded header lines continue with whitespace.
  for (const line of head.replace(/\r?\n[ \t]+/g, ' ').split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon > 0) headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
  }
  return { headers, body };
}

/** RFC 2047 encoded words (`=?UTF-8?Q?...?=`, `=?UTF-8?B?...?=`), as nodemailer writes them. */
function decodeWords(value: string): string {
  return value.replace(/=\?([^?]+)\?([QqBb])\?([^?]*)\?=\s*(?==\?)?/g, (_m, _charset: string, enc: string, text: string) =>
    enc.toUpperCase() === 'B'
      ? Buffer.from(text, 'base64').toString('utf8')
      : Buffer.from(text.replace(/_/g, ' ').replace(/=([0-9A-Fa-f]{2})/g, (_x, h: string) => String.fromCharCode(parseInt(h, 16))), 'latin1').toString('utf8'),
  );
}

function decodeBody(part: Part): string {
  const encoding = (part.headers.get('content-transfer-encoding') ?? '').toLowerCase();
  if (encoding === 'base64') return Buffer.from(part.body.replace(/\s+/g, ''), 'base64').toString('utf8');
  if (encoding === 'quoted-printable') {
    const bytes = part.body.replace(/=\r?\n/g, '').replace(/=([0-9A-Fa-f]{2})/g, (_m, h: string) => String.fromCharCode(parseInt(h, 16)));
    return Buffer.from(bytes, 'latin1').toString('utf8');
  }
  return part.body;
}

/** The first text/plain part (or the body itself), the whole of a multipart message walked depth-first. */
function textOf(part: Part): string {
  const type = part.headers.get('content-type') ?? 'text/plain';
  const boundary = /boundary="?([^";]+)"?/i.exec(type)?.[1];
  if (/^multipart\//i.test(type) && boundary) {
    const pieces = part.body.split(`--${boundary}`).slice(1, -1);
    for (const piece of pieces) {
      const text = textOf(splitPart(piece.replace(/^\r?\n/, '')));
      if (text) return text;
    }
    return '';
  }
  return /^text\/plain/i.test(type) ? decodeBody(part).replace(/\r\n/g, '\n').trimEnd() : '';
}

export function parseMessage(raw: string): { from: string; subject: string; text: string } {
  const top = splitPart(raw);
  return { from: decodeWords(top.headers.get('from') ?? ''), subject: decodeWords(top.headers.get('subject') ?? ''), text: textOf(top) };
}
