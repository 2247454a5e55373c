import { bearer, errorResponse, errors, json, md, TAGS, type OpenAPIRegistry } from '../../openapi/common.ts';
import { livenessSessionSchema, sessionPathParams } from './liveness.schemas.ts';

const CREATE = md(
  'Whoever may make a face match (`POST /verify-nin/face`; API clients: `verify`). Free. Starts a liveness check:',
  'the person shows a `front` frame, then the three `challenges` (`turn_left`, `turn_right`, `look_up`) in the',
  'order given, drawn at random for this session from a cryptographic source, so a recorded video cannot follow it.',
  '`turn_left`: the person turns to their own left (in an unmirrored frame their nose moves toward the right edge).',
  'The session can be judged until `expires_at` (`LIVENESS_SESSION_TTL_SECONDS`, 120 s by default), once.',
  'An organisation holds at most `LIVENESS_OPEN_SESSIONS_PER_ORG` (200) open sessions at once: 429',
  '`liveness_session_cap` beyond, until one is judged or expires.',
);

const READ = md(
  "The session as it stands: `open`, `expired` (never judged in time), `passed` or `failed` (with `result`: the reasons",
  'and, step by step, the yaw and pitch measured against the person\'s own front frame), or `used` (a passed session',
  "taken by a face match). Another organisation's session, like one that does not exist: 404 `liveness_session_not_found`.",
);

export function register(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: 'post',
    path: '/liveness/sessions',
    operationId: 'createLivenessSession',
    tags: [TAGS.verification],
    summary: 'Start a liveness check',
    description: CREATE,
    security: bearer,
    responses: {
      201: json(livenessSessionSchema, 'The session, open'),
      ...errors(401, 403, 429),
    },
  });
  registry.registerPath({
    method: 'get',
    path: '/liveness/sessions/{id}',
    operationId: 'getLivenessSession',
    tags: [TAGS.verification],
    summary: 'A liveness session and, once judged, its result',
    description: READ,
    security: bearer,
    request: { params: sessionPathParams },
    responses: {
      200: json(livenessSessionSchema, 'The session'),
      ...errors(401, 403, 429),
      404: errorResponse('No session of that id in this organisation (`code`: `liveness_session_not_found`)'),
    },
  });
}
