// The ops module's door: other modules and entry points import from here only.
export { serveProcessMetrics } from './metrics.ts';
export { register as registerOpsOpenApi } from './ops.openapi.ts';
export { opsRoutes } from './ops.routes.ts';
export { operatorAuth, requirePlatformAdmin } from './queues.routes.ts';
export { reencryptAll } from './key-rotation.ts';
