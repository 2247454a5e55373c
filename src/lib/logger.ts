import { pino, type Logger } from 'pino';

export type { Logger };

// Personal data must never reach a log line. Besides these redactions, callers never log request
// bodies or upstream payloads at all; the paths below are the second line of defence.
const REDACT = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-paystack-signature"]',
  'password',
  'access_token',
  'token',
  '*.password',
  '*.access_token',
  '*.nin',
  '*.phone',
  '*.phone_no',
  '*.fname',
  '*.lname',
  '*.mname',
  '*.first_name',
  '*.last_name',
  '*.date_of_birth',
  '*.dob',
  '*.image',
  '*.email',
  'nin',
  'phone',
  'email',
];

export function createLogger(opts: { level: string; name?: string; destination?: pino.DestinationStream }): Logger {
  return pino(
    {
      level: opts.level,
      name: opts.name,
      redact: { paths: REDACT, censor: '[redacted]' },
      base: { pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    opts.destination,
  );
}
