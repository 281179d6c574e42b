import { definitionNameFor } from '../openapi/schemas.js';
import type { Schema } from '../resources/types.js';
import * as fe from '../resources/fielderrors.js';
import { formatInvalidMessage } from '../resources/common.js';
import { ApiInvalidError, badRequest } from '../status.js';
import { GoDecodeError, definitionNode, runCheck, structCheck, type Check } from './typed.js';

/** The kind a body is decoded into. */
export interface TypedTarget {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
}

/**
 * `body`: a create/update/subresource body (a failure is 400 BadRequest, as kube's
 * `transformDecodeError` words it); `patch`: the object a patch produced (422 Invalid with one cause
 * on the field `patch`, as kube's patch handler reports a patched object that does not decode).
 */
export type DecodeMode = 'body' | 'patch';

const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });

/** Kinds Stowage accepts as request bodies but does not publish a schema for. */
const EXTRA_KINDS: Readonly<Record<string, () => Check>> = {
  'v1/Binding': () =>
    structCheck('Binding', 'v1.Binding', {
      apiVersion: { type: 'string' },
      kind: { type: 'string' },
      metadata: ref('io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta'),
      target: ref('io.k8s.api.core.v1.ObjectReference'),
    }),
};

const checkers = new Map<string, Check>();

/** The compiled checker of a kind; compiled on first use, then reused for every request. */
function checkerFor(t: TypedTarget): Check {
  const key = `${t.group}/${t.version}/${t.kind}`;
  let c = checkers.get(key);
  if (!c) {
    const extra = EXTRA_KINDS[`${t.group ? `${t.group}/` : ''}${t.version}/${t.kind}`];
    c = extra ? extra() : definitionNode(definitionNameFor(t.group, t.version, t.kind)).check;
    checkers.set(key, c);
  }
  return c;
}

/**
 * Checks a decoded JSON body against its kind's Go types with `encoding/json` semantics and
 * normalises it in place (nulls to zero values, JSON-number quantities to strings). Throws the
 * Status error kube-apiserver answers when its decoder refuses the same JSON.
 */
export function decodeTyped(target: TypedTarget, value: unknown, mode: DecodeMode): void {
  try {
    runCheck(checkerFor(target), value);
  } catch (e) {
    if (!(e instanceof GoDecodeError)) throw e;
    if (mode === 'body') {
      throw badRequest(
        `${target.kind} in version "${target.version}" cannot be handled as a ${target.kind}: ${e.message}`,
      );
    }
    const causes = [fe.invalid('patch', JSON.stringify(value), e.message)];
    // kube builds this Invalid with an empty kind and name: the message starts ` "" is invalid`.
    throw new ApiInvalidError(formatInvalidMessage('', '', causes, ''), { causes });
  }
}
