import { loadCatalogue, type ModelCatalogue } from '../../core/models/catalogue.ts';
import { checkModel } from '../../core/models/status.ts';
import type { ProviderId } from '../../core/wire/providers.ts';
import { PROVIDERS } from '../../providers/registry.ts';

/**
 * Before a command sends anything: load the catalogue (the built-in one, or a user file merged
 * over it), refuse a retired model (`MODEL_RETIRED`, exit 2, naming its replacement), and say
 * once on stderr when the model is deprecated or cannot be priced. An unknown id still runs:
 * the API is the judge of which models exist. On a local engine an unknown id is the rule, not
 * a problem (its cost is compute, which the summary's engine figures report): nothing is said.
 */
export function modelCheck(
  model: string,
  tablePath: string | undefined,
  log: (line: string) => void,
  at = Date.now(),
  provider?: ProviderId,
): ModelCatalogue {
  const catalogue = loadCatalogue(tablePath);
  const check = checkModel(model, { catalogue, at, field: 'model' });
  const local = provider !== undefined && PROVIDERS[provider].local && check.status === 'unknown';
  if (check.warning && !local) log(`warning: ${check.warning}`);
  return catalogue;
}
