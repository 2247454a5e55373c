/**
 * Opening a port the configuration names. A port another process holds (a second sandbox on the
 * same machine) or one this user may not open is a configuration problem, not a crash: the process
 * says so in one line naming the variable, and exits 78 (EX_CONFIG) like a bad value (config.ts).
 */

export const EX_CONFIG = 78;

export class ListenFailure extends Error {}

function why(code: string | undefined): string {
  if (code === 'EADDRINUSE') return 'is in use; set another port';
  if (code === 'EACCES') return 'may not be opened by this user (ports below 1024 need privileges); set another port';
  if (code === 'EADDRNOTAVAIL') return 'is not an address of this machine; set another host';
  return `cannot be listened on (${code ?? 'unknown error'}); set another port`;
}

/** Runs `open`, which listens on host:port; a refusal to listen becomes a ListenFailure naming `variable`. */
export async function listenAs<T>(variable: string, host: string, port: number, open: () => Promise<T>): Promise<T> {
  try {
    return await open();
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    if (e?.syscall !== 'listen' && e?.syscall !== 'bind') throw err;
    const shown = host.includes(':') ? `[${host}]` : host;
    throw new ListenFailure(`${variable}: ${shown}:${port} ${why(e.code)}`, { cause: err });
  }
}

/** An entry point's last word on a port it could not open: the line on stderr, exit 78. Anything else is rethrown. */
export function exitOnListenFailure(err: unknown): never {
  if (!(err instanceof ListenFailure)) throw err;
  process.stderr.write(`${err.message}\n`);
  process.exit(EX_CONFIG);
}
