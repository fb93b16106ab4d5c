import { z } from 'zod';
import { ForkcacheError } from '../../util/errors.ts';
import { extractOutput, outputInstruction } from '../../fork/output.ts';
import type { OutputVerdict } from '../../loop/types.ts';
import { type StandardSchemaV1, validateStandard } from '../../tools/standard-schema.ts';

/*
 * A fan-out's output schema on the engine's thread: each fork's worker sends its final text
 * here (`output-check` on its port), the embedder's schema judges it, and the last value that
 * matched is the fork's typed `output`.
 */

/** The Standard JSON Schema extension (standardschema.dev): zod 4 gives its schema as JSON Schema through it. */
interface StandardJsonSchema {
  readonly '~standard': { readonly jsonSchema?: { readonly output?: (options: { target: string }) => unknown } };
}

/** A fan-out's `outputSchema` checked: a Standard Schema, and a backend that can hold it. */
export function parseOutputSchema(value: unknown, remote: boolean): StandardSchemaV1 | undefined {
  if (value === undefined) return undefined;
  if (typeof (value as StandardSchemaV1 | null)?.['~standard']?.validate !== 'function')
    throw new ForkcacheError(
      'INVALID_OPTION',
      'outputSchema: expected a Standard Schema (zod 4, valibot, arktype: an object with ~standard.validate)',
      { data: { field: 'outputSchema' } },
    );
  if (remote)
    throw new ForkcacheError(
      'INVALID_OPTION',
      "outputSchema: not available with the distributed backend (a host cannot run the embedder's schema)",
      { data: { field: 'outputSchema' } },
    );
  return value as StandardSchemaV1;
}

/** The schema's JSON Schema form (zod 4 gives it through Standard JSON Schema), or undefined when it has none. */
export function jsonSchemaOf(schema: StandardSchemaV1): Record<string, unknown> | undefined {
  try {
    const json = (schema as unknown as StandardJsonSchema)['~standard'].jsonSchema?.output?.({
      target: 'draft-2020-12',
    });
    return json !== null && typeof json === 'object' && !Array.isArray(json)
      ? (json as Record<string, unknown>)
      : undefined;
  } catch {
    // a schema with no JSON Schema form (a transform, a custom check): the child is shown the errors instead
    return undefined;
  }
}

/** The text every child's directive gets: where its value goes, and the schema as JSON Schema when it has one. */
export function outputInstructionOf(schema: StandardSchemaV1): string {
  return outputInstruction(jsonSchemaOf(schema));
}

/**
 * A JSON Schema as a Standard Schema, read by zod (`z.fromJSONSchema`: no validator of our own):
 * an MCP caller's `outputSchema`, and the one a run's manifest recorded for resume.
 */
export function standardSchemaOfJson(jsonSchema: Record<string, unknown>, field: string): StandardSchemaV1 {
  try {
    return z.fromJSONSchema(jsonSchema as Parameters<typeof z.fromJSONSchema>[0]);
  } catch (err) {
    throw new ForkcacheError(
      'INVALID_OPTION',
      `${field}: not a JSON Schema forkcache can check: ${(err as Error).message}`,
      { data: { field }, cause: err },
    );
  }
}

/** Judges each report of one fan-out's forks; keeps every fork's last matching value. */
export class OutputChecks {
  readonly #schema: StandardSchemaV1;
  readonly #values = new Map<string, unknown>();

  constructor(schema: StandardSchemaV1) {
    this.#schema = schema;
  }

  async check(forkId: string, finalText: string): Promise<OutputVerdict> {
    // a later report that does not match takes back what an earlier one gave
    this.#values.delete(forkId);
    const found = extractOutput(finalText);
    if (!found.ok) return { ok: false, errors: found.message };
    const valid = await validateStandard(this.#schema, found.value);
    if (!valid.ok) return { ok: false, errors: valid.message };
    this.#values.set(forkId, valid.value);
    return { ok: true };
  }

  /** The fork's last value that matched, when it reported one. */
  valueOf(forkId: string): { output: unknown } | undefined {
    return this.#values.has(forkId) ? { output: this.#values.get(forkId) } : undefined;
  }
}
