// The portal module's door: the web portal for organisations' people, served by the API process.
export { portalRoutes } from './portal.routes.ts';
