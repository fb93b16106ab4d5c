// Type tests: compiled by `npm run typecheck` (tsc), never run. They fail the build when the
// public types and what the code accepts drift apart.
import { expectTypeOf } from 'vitest';
import type { z } from 'zod';
import type { EngineSettings, ForkEngine, ForkEngineOptions } from '../../src/index.ts';
import type { engineOptionsSchema } from '../../src/core/engine/options.ts';

// The engine's option interface and the schema that validates it name the same fields: a new
// option added to one and not the other does not compile.
expectTypeOf<keyof z.input<typeof engineOptionsSchema>>().toEqualTypeOf<keyof ForkEngineOptions>();

// What `engine.options` shows is the public settings type: no test hooks.
expectTypeOf<ForkEngine['options']>().toEqualTypeOf<Readonly<EngineSettings>>();
expectTypeOf<EngineSettings>().not.toHaveProperty('testHooks');

// Bench-only settings are no public options, and the settings do not show them.
expectTypeOf<ForkEngineOptions>().not.toHaveProperty('markers');
expectTypeOf<ForkEngineOptions>().not.toHaveProperty('slotFill');
expectTypeOf<EngineSettings>().not.toHaveProperty('markers');
expectTypeOf<EngineSettings>().not.toHaveProperty('slotFill');
