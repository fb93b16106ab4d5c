import { z } from 'zod';

/*
 * `forkcache run --help` lists every plan field with its type, default and description, read
 * from the plan's zod schema (src/cli/plan/plan.ts) through its JSON Schema: a field added there is
 * listed here, with no second list to forget.
 */

interface JsonSchema {
  type?: string;
  enum?: unknown[];
  anyOf?: JsonSchema[];
  items?: JsonSchema;
  properties?: Record<string, JsonSchema>;
  default?: unknown;
  description?: string;
}

function typeOf(schema: JsonSchema): string {
  if (schema.enum) return schema.enum.map(String).join(' | ');
  if (schema.anyOf) return schema.anyOf.map(typeOf).join(' | ');
  if (schema.type === 'array') {
    const item = schema.items ? typeOf(schema.items) : 'value';
    return item.includes(' | ') ? `(${item})[]` : `${item}[]`;
  }
  if (schema.type === 'object') return schema.properties ? '{…}' : 'object';
  return schema.type ?? 'value';
}

/** One line per field (nested objects' fields as `limits.maxTurns`), aligned. */
export function planFieldsHelp(schema: z.ZodType): string {
  const json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as JsonSchema;
  const rows: [string, string, string][] = [];
  const walk = (properties: Record<string, JsonSchema>, prefix: string): void => {
    for (const [name, field] of Object.entries(properties)) {
      const fallback = field.default === undefined ? '' : ` (default ${JSON.stringify(field.default)})`;
      const nested = field.type === 'object' && field.properties;
      if (!nested || field.description)
        rows.push([`${prefix}${name}`, typeOf(field), `${field.description ?? ''}${nested ? '' : fallback}`.trim()]);
      if (nested) walk(field.properties!, `${prefix}${name}.`);
    }
  };
  walk(json.properties ?? {}, '');
  const width = Math.max(...rows.map(([name]) => name.length));
  return rows.map(([name, type, text]) => `  ${name.padEnd(width)}  ${type}${text ? `: ${text}` : ''}`).join('\n');
}
