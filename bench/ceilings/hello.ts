import express from 'express';

/**
 * The ceiling of any route on this machine: a bare express 5 app answering a small JSON body, in a
 * process of its own, with none of the service's middleware. Env: PORT.
 */
const app = express();
app.disable('x-powered-by');
app.set('etag', false);
app.get('/hello', (_req, res) => {
  res.json({ hello: 'world' });
});
const server = app.listen(Number(process.env.PORT ?? 0), '127.0.0.1');
server.keepAliveTimeout = 65_000;
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    server.close();
    server.closeAllConnections();
    process.exit(0);
  });
}
