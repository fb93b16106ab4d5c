import { createHash } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { SPAWN_TOOL_NAME } from '../../../src/core/wire/fork-text.ts';
import { TOOL_DECLARATIONS } from '../../../src/core/tools/declarations.ts';
import { TOOL_NAMES } from '../../../src/core/wire/tool-names.ts';
import { TOOL_INPUT_SCHEMAS } from '../../../src/core/tools/schemas.ts';
import { executorIn, makeSandbox, type Sandbox } from './helpers.ts';

const sha256 = (value: unknown): string => createHash('sha256').update(JSON.stringify(value)).digest('hex');

function collectObjects(value: unknown, out: object[] = []): object[] {
  if (typeof value === 'object' && value !== null) {
    out.push(value);
    for (const child of Object.values(value)) collectObjects(child, out);
  }
  return out;
}

describe('TOOL_DECLARATIONS', () => {
  let sandbox: Sandbox;
  beforeEach(async () => {
    sandbox = await makeSandbox();
  });
  afterEach(() => sandbox.cleanup());

  it('declares every tool once, in the fixed order, spawn tool included', () => {
    expect(TOOL_DECLARATIONS.map((d) => d.name)).toEqual([...TOOL_NAMES]);
    expect(TOOL_NAMES).toContain(SPAWN_TOOL_NAME);
    expect(new Set(TOOL_NAMES).size).toBe(TOOL_NAMES.length);
    for (const d of TOOL_DECLARATIONS) {
      expect(Object.keys(d)).toEqual(['name', 'description', 'input_schema']);
      expect(d.description?.length).toBeGreaterThan(20);
      expect(d.input_schema).toMatchObject({ type: 'object', additionalProperties: false });
    }
  });

  it('is deeply frozen: no object inside it can be changed', () => {
    const objects = collectObjects(TOOL_DECLARATIONS);
    expect(objects.length).toBeGreaterThan(40);
    for (const o of objects) expect(Object.isFrozen(o)).toBe(true);
    const first = TOOL_DECLARATIONS[0] as { description?: string };
    expect(() => {
      first.description = 'changed';
    }).toThrow(TypeError);
    expect(() => (TOOL_DECLARATIONS as unknown[]).push({})).toThrow(TypeError);
    expect(() => (TOOL_DECLARATIONS as unknown[]).reverse()).toThrow(TypeError);
  });

  it('serializes to the same bytes after a fresh import of the module', async () => {
    const before = sha256(TOOL_DECLARATIONS);
    vi.resetModules();
    const again =
      (await import('../../../src/core/tools/declarations.ts')) as typeof import('../../../src/core/tools/declarations.ts');
    expect(again.TOOL_DECLARATIONS).not.toBe(TOOL_DECLARATIONS); // really evaluated twice
    expect(sha256(again.TOOL_DECLARATIONS)).toBe(before);
    expect(JSON.stringify(again.TOOL_DECLARATIONS)).toBe(JSON.stringify(TOOL_DECLARATIONS));
  });

  it('is left untouched by executors, whatever they allow and run', async () => {
    const before = sha256(TOOL_DECLARATIONS);
    await sandbox.put('a.txt', 'hello\n');
    const narrow = executorIn(sandbox, { allow: ['read_file'] });
    const wide = executorIn(sandbox, {
      allow: ['read_file', 'list_dir', 'grep', 'glob', 'edit_file', 'write_file', 'bash'],
    });
    await narrow.execute('read_file', { path: 'a.txt' });
    await narrow.execute('write_file', { path: 'b.txt', content: 'x' });
    await wide.execute('edit_file', { path: 'a.txt', old_string: 'hello', new_string: 'bye' });
    await wide.execute(SPAWN_TOOL_NAME, { directive: 'x' });
    await wide.execute('nope', {});
    expect(sha256(TOOL_DECLARATIONS)).toBe(before);
  });

  it('declares the same fields, required and optional, as the input validation', () => {
    for (const [name, schema] of Object.entries(TOOL_INPUT_SCHEMAS)) {
      const declared = TOOL_DECLARATIONS.find((d) => d.name === name);
      expect(declared, name).toBeDefined();
      const json = declared?.input_schema as { properties: Record<string, unknown>; required: string[] };
      const shape = (schema as z.ZodObject).shape as Record<string, z.ZodType>;
      expect(Object.keys(json.properties).sort(), name).toEqual(Object.keys(shape).sort());
      const required = Object.keys(shape).filter((key) => !(shape[key] as z.ZodType).safeParse(undefined).success);
      expect([...json.required].sort(), name).toEqual(required.sort());
    }
  });
});
