import { z } from 'zod';

// The liveness module's shapes, the one source of their validation, types and OpenAPI.

export const CHALLENGES = ['turn_left', 'turn_right', 'look_up'] as const;
export type Challenge = (typeof CHALLENGES)[number];
export const STEPS = ['front', ...CHALLENGES] as const;
export type Step = (typeof STEPS)[number];

export const LIVENESS_REASONS = ['no_face', 'several_faces', 'face_changed', 'pose_not_reached', 'still_image', 'flat_image', 'frames_reused', 'timing'] as const;
export type LivenessReason = (typeof LIVENESS_REASONS)[number];

export const SESSION_STATUSES = ['open', 'passed', 'failed', 'used', 'expired'] as const;

export const sessionIdSchema = z
  .string()
  .regex(/^lvs_[0-9a-f]{24}$/, 'id must be lvs_ followed by 24 lower-case hexadecimal digits')
  .meta({ description: 'The session', example: 'lvs_5f0c2a9e1b7d4c3a8e6f0b12' });

export const sessionPathParams = z.object({ id: sessionIdSchema });

export const stepResultSchema = z
  .object({
    step: z.enum(STEPS),
    passed: z.boolean(),
    yaw: z.number().nullable().meta({ description: "Degrees the head is turned from the person's own front frame (positive: to the person's left), the frame closest to the step's pose; null when no frame of the step showed one face" }),
    pitch: z.number().nullable().meta({ description: "Degrees the chin is raised from the person's own front frame (positive: chin up)" }),
    frames: z.number().int().meta({ description: 'Frames sent for the step' }),
  })
  .meta({ id: 'LivenessStep' });

export const livenessResultSchema = z
  .object({
    status: z.enum(['passed', 'failed']),
    reasons: z.array(z.enum(LIVENESS_REASONS)).meta({ description: 'Every reason that applies; empty when passed' }),
    steps: z.array(stepResultSchema),
  })
  .meta({ id: 'LivenessResult', description: 'What the frames showed, step by step (no frame is kept)' });
export type LivenessResult = z.infer<typeof livenessResultSchema>;

export const livenessSessionSchema = z
  .object({
    id: sessionIdSchema,
    challenges: z.array(z.enum(CHALLENGES)).meta({ description: 'The poses to show after the `front` frame, in this order (drawn at random for each session)' }),
    status: z.enum(SESSION_STATUSES).meta({ description: '`open` until judged or expired; `passed` or `failed` once judged; `used` once a passed session was taken by a face match; `expired` when never judged in time' }),
    expires_at: z.string().meta({ format: 'date-time', description: 'After this instant the session cannot be judged' }),
    result: livenessResultSchema.optional().meta({ description: 'Once judged' }),
  })
  .meta({ id: 'LivenessSession' });
export type LivenessSession = z.infer<typeof livenessSessionSchema>;

/**
 * What a face match keeps and answers of the passed liveness check its selfie came from (no frame,
 * landmark or descriptor): the session, its challenges in order, the steps as measured, the checks made
 * (each one a reason the check would have failed with) and the face model that read the frames.
 */
export const livenessCheckSchema = z
  .object({
    session_id: sessionIdSchema,
    challenges: z.array(z.enum(CHALLENGES)).meta({ description: 'The poses asked after the `front` frame, in the order the session drew' }),
    steps: z.array(stepResultSchema),
    checks: z.array(z.enum(LIVENESS_REASONS)).meta({ description: 'The checks made, each named by the reason it fails with (all passed)' }),
    model: z.string().meta({ description: 'The face model that read the frames' }),
  })
  .meta({ id: 'LivenessCheck' });
export type LivenessCheck = z.infer<typeof livenessCheckSchema>;

/** A frame as a face match sends it (its image decoded and checked by the verification module). */
export type LivenessFrameInput = { step: Step; image: string; captured_at_ms: number };
