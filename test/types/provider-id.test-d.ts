// Type tests: compiled by `npm run typecheck` (tsc), never run. `ProviderId` is the registry's
// keys (src/providers/registry.ts fills in `ProviderRegister`): not a plain string, and a new
// registry line makes a new id with nothing else changed.
import { expectTypeOf } from 'vitest';
import type { ProviderId } from '../../src/core/wire/providers.ts';
import type { ForkEngineOptions } from '../../src/core/engine/options.ts';
import { PROVIDERS } from '../../src/providers/registry.ts';

expectTypeOf<ProviderId>().toEqualTypeOf<keyof typeof PROVIDERS>();
expectTypeOf<'llama-cpp'>().toExtend<ProviderId>();
expectTypeOf<string>().not.toExtend<ProviderId>();

// an engine option takes a registered id, and refuses another at compile time
const options: ForkEngineOptions = { provider: 'deepseek' };
// @ts-expect-error: no adapter is registered under this id
const refused: ForkEngineOptions = { provider: 'nobody' };
void [options, refused];
