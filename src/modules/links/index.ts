// The links module's door: verification links over the API (organisation administrators), the
// person's page at /v/<token>, their part of the OpenAPI document, and the sweep of submissions
// left pending (the links.sweep job).
export { linksRoutes } from './links.routes.ts';
export { linkPageRoutes } from './page/page.routes.ts';
export { register as registerLinksOpenApi } from './links.openapi.ts';
export { sweepSubmissions } from './submissions.ts';
