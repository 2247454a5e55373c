// The team module's door: organisation administrators managing their organisation's users.
export { register as registerTeamOpenApi } from './team.openapi.ts';
export { teamRoutes } from './team.routes.ts';
