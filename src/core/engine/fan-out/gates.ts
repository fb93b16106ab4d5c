import { CACHE_TTL_MS } from '../../wire/cache.ts';
import { AdmissionGate, type SpendPricing } from '../../gate/admission/admission-gate.ts';
import { fanOutSpend } from './spend.ts';
import type { FrozenPrefix } from '../../prefix/freeze.ts';
import type { FanOutAccounts } from './accounts.ts';
import type { FanOutDeps } from './types.ts';
import { WarmGate } from '../warm-gate.ts';

/** What the fan-out's requests pass through before they leave. */
export interface FanOutGates {
  /** The warm-first barrier for the shared prefix. */
  warm: WarmGate;
  /** The warm gate behind the engine's rate-limit admission: what each fork's requests ask. */
  admission: AdmissionGate;
  /** What remote hosts' shared admission needs to price a request like the local one does. */
  shared(): { modelClass: string; tokensPerByte: number; readsShared: boolean };
  /** The spend cap as this fan-out prices it (`maxUsd`), if there is one. */
  spend: SpendPricing | undefined;
}

export function openFanOutGates(deps: FanOutDeps, prefix: FrozenPrefix, accounts: FanOutAccounts): FanOutGates {
  const warm = new WarmGate({
    strategy: deps.options.warm,
    limit: deps.api,
    ttlMs: CACHE_TTL_MS[prefix.ttl],
    clock: deps.clock,
    readable: deps.provider.readability,
  });
  // the shared prefix is read only once it was written with a boundary marker
  const readsShared = (): boolean => prefix.markers === 'boundary' && warm.state === 'warm';
  // measured when the API counted the prefix; estimated from its bytes until then
  const tokensPerByte = (): number => (accounts.sharedTokens ?? prefix.approxTokens) / Math.max(1, prefix.byteLength);
  deps.admission.retryAfterStop();
  if (deps.options.admission === 'on') deps.remote?.retryAfterStop?.(deps.modelClass(prefix.snapshot.model));
  const spend = fanOutSpend(deps, prefix);
  const admission = new AdmissionGate({
    scheduler: deps.admission,
    inner: warm,
    prefixReadable: readsShared,
    prefixCanBeRead: prefix.markers === 'boundary',
    turnsRead: prefix.childMarker !== false,
    modelClass: deps.modelClass(prefix.snapshot.model),
    tokensPerByte,
    clock: deps.clock,
    spend,
    sharedTokens: () => accounts.sharedTokens,
    headBytes: prefix.head.byteLength,
  });
  return {
    warm,
    admission,
    spend,
    shared: () => ({
      modelClass: deps.modelClass(prefix.snapshot.model),
      tokensPerByte: tokensPerByte(),
      readsShared: readsShared(),
    }),
  };
}
