/**
 * PostgreSQL on the same machine is reached through its Unix-domain socket with a URL whose host is
 * empty and whose `host` parameter names the socket's directory, libpq's form:
 * `postgres://postgres@/idverify?host=/var/run/postgresql`. That is not a URL to WHATWG parsers
 * (user information without a host), which slonik and our own code use; the same connection is
 * written with the directory, percent-encoded, as the host, which every parser we use reads back
 * as the socket directory: `postgres://postgres@%2Fvar%2Frun%2Fpostgresql/idverify`. Other URLs
 * are returned as they are.
 */
export function socketAwareDatabaseUrl(url: string): string {
  const m = /^(postgres(?:ql)?:\/\/)([^@/?#]*@)?(?::(\d+))?\/([^?#]*)\?([^#]*)$/.exec(url);
  if (!m) return url;
  const [, scheme, userinfo = '', port, database, query] = m;
  const params = new URLSearchParams(query);
  const host = params.get('host');
  if (!host?.startsWith('/')) return url;
  params.delete('host');
  const rest = params.toString();
  return `${scheme}${userinfo}${encodeURIComponent(host)}${port ? `:${port}` : ''}/${database}${rest ? `?${rest}` : ''}`;
}
