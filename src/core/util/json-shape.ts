import { formatPath } from './validation.ts';

/**
 * Deepest JSON nesting accepted in a parent, a plan or a request. Real tool schemas and
 * messages stay far below it; a 5,000-deep schema overflowed the stack of every recursive
 * step (validation, cloning, serialization) with a bare RangeError.
 */
const MAX_JSON_DEPTH = 256;

// A high surrogate not followed by a low one, or a low one not preceded by a high one.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

const wellFormed = (text: string): boolean => !LONE_SURROGATE.test(text);

type JsonShapeProblem = { kind: 'depth' | 'surrogate'; path: string; message: string };

/**
 * The first problem of a parsed JSON value that JSON.parse let through: nesting deeper than
 * `maxDepth`, or a string (value or key) holding a lone UTF-16 surrogate (`"\ud800"`), which
 * cannot be encoded as UTF-8 and would be replaced by U+FFFD on the way out, silently
 * changing the prompt. Iterative: it must not overflow on the input it exists to refuse.
 */
export function findJsonShapeProblem(value: unknown, maxDepth = MAX_JSON_DEPTH): JsonShapeProblem | undefined {
  const stack: { value: unknown; path: PropertyKey[] }[] = [{ value, path: [] }];
  while (stack.length > 0) {
    const { value: current, path } = stack.pop()!;
    if (typeof current === 'string') {
      if (!wellFormed(current))
        return {
          kind: 'surrogate',
          path: formatPath(path),
          message: 'contains a lone UTF-16 surrogate (not valid Unicode text)',
        };
      continue;
    }
    if (typeof current !== 'object' || current === null) continue;
    if (path.length >= maxDepth)
      return {
        kind: 'depth',
        path: `${formatPath(path.slice(0, 8))}…`,
        message: `nested deeper than ${maxDepth} levels`,
      };
    if (Array.isArray(current)) {
      current.forEach((item, i) => stack.push({ value: item, path: [...path, i] }));
      continue;
    }
    for (const [key, item] of Object.entries(current)) {
      if (!wellFormed(key))
        return { kind: 'surrogate', path: formatPath(path), message: `has a key with a lone UTF-16 surrogate` };
      stack.push({ value: item, path: [...path, key] });
    }
  }
  return undefined;
}

/**
 * A body as a log keeps it: its parsed JSON when that is safe to write back out, else its
 * text. JSON nested thousands deep parses, but `JSON.stringify` of it overflows the stack: in
 * a log writer that was an uncaught exception that killed the proxy (and the emulator).
 */
export function jsonOrText(text: string): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return text;
  }
  return findJsonShapeProblem(value)?.kind === 'depth' ? text : value;
}
