import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from '../setup/harness.ts';

/**
 * PATCH /webhook-endpoints/{id} needs at least one field: the served OpenAPI document says so
 * (`minProperties: 1` on WebhookEndpointChange), so that a body the document accepts is one the
 * server accepts, and `{}` is refused by both.
 */
let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ workers: false });
});
afterAll(async () => stack?.close());

describe('the document of an endpoint change', () => {
  it('When the document is read, then WebhookEndpointChange has minProperties 1 and no required field; the server answers {} with 400 and one field with 200', async () => {
    const doc = (await stack.api('GET', '/v1/openapi.json')).body;
    const op = doc.paths['/webhook-endpoints/{id}'].patch;
    expect(op.requestBody.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/WebhookEndpointChange' });
    const change = doc.components.schemas.WebhookEndpointChange;
    expect(change.minProperties).toBe(1);
    expect(change.required ?? []).toEqual([]);

    const org = await stack.createOrg();
    const made = await stack.api('POST', '/v1/webhook-endpoints', { token: org.admin.token, json: { url: 'http://127.0.0.1:9/change', events: ['ping'] } });
    expect(made.status).toBe(201);
    const empty = await stack.api('PATCH', `/v1/webhook-endpoints/${made.body.id}`, { token: org.admin.token, json: {} });
    expect(empty.status, empty.text).toBe(400);
    expect(empty.body.detail).toMatch(/at least one of url, events, enabled, description/);
    const one = await stack.api('PATCH', `/v1/webhook-endpoints/${made.body.id}`, { token: org.admin.token, json: { description: 'one field' } });
    expect(one.status, one.text).toBe(200);
  });
});
