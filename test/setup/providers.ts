// What the public entries do as they load (src/index.ts): hand core the provider adapters.
// Tests import core's modules directly (ForkEngine from src/core/engine/engine.ts), so every
// test file gets them here.
import { useProviders } from '../../src/core/engine/providers-registered.ts';
import { PROVIDERS } from '../../src/providers/registry.ts';

useProviders(PROVIDERS);
