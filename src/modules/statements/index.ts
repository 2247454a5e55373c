// The statements module's door: a month of an organisation's wallet, read from the wallet and top-up modules.
export { statementRoutes } from './statements.routes.ts';
export { register as registerStatementsOpenApi } from './statements.openapi.ts';
export { mailMonthlyStatements } from './monthly-mail.ts';
