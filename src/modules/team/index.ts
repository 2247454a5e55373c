// The team module's door: organisation administrators managing their organisation's users.
export { register as registerTeamOpenApi, registerSettings as registerSettingsOpenApi } from './team.openapi.ts';
export { settingsRoutes } from './settings.routes.ts';
export { teamRoutes } from './team.routes.ts';
