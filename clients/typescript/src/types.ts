import type { components, operations as Generated } from './openapi.ts';
import type { OperationId } from './operations.ts';

/**
 * The client's names for openapi-typescript's output: `Schemas` by component name, and per operation
 * its request body, header, path and query parameters and JSON response body by status, so callers index
 * `Operations['verifyNin']['responses']['200']` without the `content`/media-type layers.
 */
export type Schemas = components['schemas'];

type Absent<T> = [NonNullable<T>] extends [never] ? true : false;
type JsonOf<R> = R extends { content: { 'application/json': infer T } } ? T : undefined;
type BodyOf<Op extends { requestBody?: unknown }> =
  Absent<Op['requestBody']> extends true ? undefined : NonNullable<Op['requestBody']> extends { content: infer C } ? C[keyof C] : undefined;
type HeadersOf<Op extends { parameters: { header?: unknown } }> =
  Absent<Op['parameters']['header']> extends true ? Record<string, never> : NonNullable<Op['parameters']['header']>;
type ParamsOf<P> = Absent<P> extends true ? Record<string, never> : NonNullable<P>;
type ResponsesOf<R> = { [S in keyof R as S extends number | string ? `${S}` : never]: JsonOf<R[S]> };

export type Operations = {
  [K in OperationId]: {
    body: BodyOf<Generated[K]>;
    headers: HeadersOf<Generated[K]>;
    path: ParamsOf<Generated[K]['parameters']['path']>;
    query: ParamsOf<Generated[K]['parameters']['query']>;
    responses: ResponsesOf<Generated[K]['responses']>;
  };
};
