import { ForkcacheError } from '../util/errors.ts';
import type { ProviderAdapter, ProviderRegistry } from './provider.ts';
import { type ProviderId, providerWireOf, registerProviderWires } from '../wire/providers.ts';

let registered: ProviderRegistry | undefined;

/**
 * Hand core the provider adapters (src/providers/registry.ts). Core never imports them: the
 * package's entry (src/index.ts, which package.json's `sideEffects` names so that a bundler
 * keeps this call), the CLI and the fork worker call this once as they load, and an engine
 * made after that speaks any provider the registry names.
 */
export function useProviders(registry: ProviderRegistry): void {
  registered = registry;
  registerProviderWires(registry);
}

/** The adapters handed to `useProviders`. */
export function registeredProviders(): ProviderRegistry {
  if (!registered)
    throw new ForkcacheError(
      'INTERNAL',
      'no provider adapters: import forkcache from its entry (the package, or src/index.ts), which hands core src/providers/registry.ts',
    );
  return registered;
}

/** The adapter of `provider`; an id no adapter has is refused, naming `field` and the ids there are. */
export function adapterOf(provider: ProviderId, field = 'provider'): ProviderAdapter {
  providerWireOf(provider, field);
  return registeredProviders()[provider];
}
