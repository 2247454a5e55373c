export { ApiError, createClient, type Client, type ClientOptions, type OperationId, type Operations, type Schemas } from './client.ts';
export { operations } from './operations.ts';
export { verifyWebhookSignature } from './webhooks.ts';
