import { z } from 'zod';
import { createLogger } from '../../lib/logger.ts';
import { REFUND_STATES } from './refunds.ts';
import { startPaymentSimulator, WEBHOOK_MODES } from './server.ts';

// Standalone entry point (`node src/simulators/payment-processor/main.ts`); the only simulator file
// that reads the environment.
const env = z
  .object({
    PORT: z.coerce.number().int().min(0).max(65535).default(4020),
    SIM_HOST: z.string().default('0.0.0.0'),
    PAYSTACK_SECRET_KEY: z.string().min(1).default('sk_test_sandbox_secret'),
    SIM_WEBHOOK_URL: z.url().optional(),
    SIM_WEBHOOK_MODE: z.enum(WEBHOOK_MODES).default('normal'),
    SIM_WEBHOOK_RETRY_MS: z.coerce.number().int().positive().default(3000),
    SIM_WEBHOOK_MAX_ATTEMPTS: z.coerce.number().int().positive().default(10),
    SIM_LATE_MS: z.coerce.number().int().min(0).default(10_000),
    SIM_REFUND_STATUS: z.enum(REFUND_STATES).default('pending'),
    // Base of checkout links when payers reach the simulator through another address (container, tunnel).
    SIM_PUBLIC_URL: z.url().optional(),
  })
  .safeParse(process.env);

const log = createLogger({ level: 'info', name: 'payment-simulator' });

if (!env.success) {
  const issue = env.error.issues[0];
  process.stderr.write(`invalid configuration: ${issue?.path.join('.') ?? 'environment'}: ${issue?.message ?? ''}\n`);
  process.exit(78);
}

const sim = await startPaymentSimulator({
  host: env.data.SIM_HOST,
  port: env.data.PORT,
  secretKey: env.data.PAYSTACK_SECRET_KEY,
  webhookMode: env.data.SIM_WEBHOOK_MODE,
  webhookRetryMs: env.data.SIM_WEBHOOK_RETRY_MS,
  webhookMaxAttempts: env.data.SIM_WEBHOOK_MAX_ATTEMPTS,
  lateMs: env.data.SIM_LATE_MS,
  refundStatus: env.data.SIM_REFUND_STATUS,
  ...(env.data.SIM_WEBHOOK_URL ? { webhookUrl: env.data.SIM_WEBHOOK_URL } : {}),
  ...(env.data.SIM_PUBLIC_URL ? { publicUrl: env.data.SIM_PUBLIC_URL } : {}),
});
log.info({ url: sim.url, webhookMode: env.data.SIM_WEBHOOK_MODE, webhook: Boolean(env.data.SIM_WEBHOOK_URL) }, 'payment processor simulator listening');

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    void sim.close().then(() => process.exit(0));
  });
}
