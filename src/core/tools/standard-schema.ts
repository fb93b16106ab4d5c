/**
 * The Standard Schema interface (standardschema.dev, v1), which zod 4, valibot and arktype
 * implement: written out here, as the spec asks of libraries that accept schemas, so that
 * forkcache and its published types depend on no package for it. Only what forkcache reads.
 */
export interface StandardSchemaV1<Input = unknown, Output = Input> {
  readonly '~standard': {
    readonly version: 1;
    readonly vendor: string;
    readonly validate: (value: unknown) => StandardSchemaV1.Result<Output> | Promise<StandardSchemaV1.Result<Output>>;
    readonly types?: { readonly input: Input; readonly output: Output } | undefined;
  };
}

// eslint-disable-next-line @typescript-eslint/no-namespace -- the spec's own shape: StandardSchemaV1.Result, .Issue
export declare namespace StandardSchemaV1 {
  type Result<Output> = { readonly value: Output; readonly issues?: undefined } | { readonly issues: readonly Issue[] };
  interface Issue {
    readonly message: string;
    readonly path?: readonly (PropertyKey | { readonly key: PropertyKey })[] | undefined;
  }
  /** The type a schema's `validate` gives on success. */
  type InferOutput<Schema extends StandardSchemaV1> = NonNullable<Schema['~standard']['types']>['output'];
}

/** Validate with a Standard Schema: the value, or the issues as one line naming each field. */
export async function validateStandard<Output>(
  schema: StandardSchemaV1<unknown, Output>,
  value: unknown,
): Promise<{ ok: true; value: Output } | { ok: false; message: string }> {
  const result = await schema['~standard'].validate(value);
  if (result.issues === undefined) return { ok: true, value: result.value };
  const message = result.issues
    .map((issue) => {
      const path = (issue.path ?? []).map((p) => String(typeof p === 'object' ? p.key : p)).join('.');
      return path === '' ? issue.message : `${path}: ${issue.message}`;
    })
    .join('; ');
  return { ok: false, message };
}
