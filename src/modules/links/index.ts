// The links module's door: verification links over the API (organisation administrators), the
// person's page at /v/<token>, and their part of the OpenAPI document.
export { linksRoutes } from './links.routes.ts';
export { linkPageRoutes } from './page/page.routes.ts';
export { register as registerLinksOpenApi } from './links.openapi.ts';
