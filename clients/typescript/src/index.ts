export { ApiError, createClient, type Client, type ClientOptions, type OperationId, type Operations, type Schemas } from './client.ts';
export { operations } from './operations.ts';
export { standardWebhooksKey, verifyStandardWebhook, verifyWebhook, verifyWebhookSignature, type WebhookHeaders } from './webhooks.ts';
