import { bearer, errorResponse, errors, json, jsonBody, TAGS, type OpenAPIRegistry } from '../../openapi/common.ts';
import { autoTopupAnswer, autoTopupPut } from './auto.schemas.ts';

const WHO = 'Organisation administrators and finance officers, signed in as themselves: API clients are refused (403).';

export function register(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: 'get',
    path: '/settings/auto-topup',
    operationId: 'getAutoTopup',
    tags: [TAGS.topup],
    summary: 'Automatic top-up: the settings, the saved card and the latest charges',
    description: `${WHO} Before the first \`PUT\`, \`enabled\` is false and the numbers are null.`,
    security: bearer,
    responses: { 200: json(autoTopupAnswer), ...errors(401, 429), 403: errorResponse('Not an administrator or finance officer, or an API client') },
  });
  registry.registerPath({
    method: 'put',
    path: '/settings/auto-topup',
    operationId: 'setAutoTopup',
    tags: [TAGS.topup],
    summary: 'Turn automatic top-up on or off, with its line, its units and its daily limit',
    description:
      `${WHO} Every field is sent each time, with the caller's password re-entered (a wrong one counts as a failed sign-in, as on ` +
      '`POST /login`, and is on the audit trail as one: `auth.login_failed` with `confirming: auto_topup.settings`). While on, a debit that leaves the balance below `below_units` buys `units` with the card of the organisation\'s last ' +
      'successful top-up, at most one charge at a time and `max_per_day` charges a Lagos day. Turning it on needs such a card, one the ' +
      'processor will charge again (409 otherwise). Saving charges nothing by itself: the next debit below the line does.',
    security: bearer,
    request: { body: jsonBody(autoTopupPut) },
    responses: {
      200: json(autoTopupAnswer, 'Saved'),
      ...errors(401, 415, 422, 429),
      400: errorResponse('A value breaks a rule: below_units, units (a top-up\'s rule: a multiple of 100, at least the minimum) or max_per_day'),
      403: errorResponse('The password is incorrect, or the caller is not an administrator or finance officer, or is an API client'),
      409: errorResponse('Turning it on without a card to charge: no saved card, one the processor will not charge again, or one that was declined'),
    },
  });
}
