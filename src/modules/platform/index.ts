// The platform module's door: the platform administrators' view of every organisation (JSON and page).
export { register as registerPlatformOpenApi } from './platform.openapi.ts';
export { platformPageRoutes } from './platform.page.ts';
export { platformRoutes } from './platform.routes.ts';
