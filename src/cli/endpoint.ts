import { startEmulator } from '../emulator/server/start.ts';
import { ForkcacheError } from '../errors.ts';
import type { ModelCatalogue } from '../models/catalogue.ts';

export type ApiChoice = 'auto' | 'anthropic' | 'emulator';

export interface Endpoint {
  baseURL: string;
  apiKey: string;
  kind: 'anthropic' | 'emulator';
  /** For the log line: where requests go. */
  label: string;
  close(): Promise<void>;
}

/**
 * Where requests go: the real API when `ANTHROPIC_API_KEY` is set (or `--api anthropic`,
 * which insists on it), else an embedded emulator started here.
 */
export async function openEndpoint(api: ApiChoice, emulator: { script: string; latency: 'off' | 'fast' | 'realistic' }, catalogue?: ModelCatalogue): Promise<Endpoint> {
  const key = process.env['ANTHROPIC_API_KEY'];
  if (api === 'anthropic' && !key) throw new ForkcacheError('INVALID_ARGUMENT', '--api anthropic: ANTHROPIC_API_KEY is not set');
  if (api === 'anthropic' || (api === 'auto' && key)) {
    return { baseURL: process.env['ANTHROPIC_BASE_URL'] ?? 'https://api.anthropic.com', apiKey: key!, kind: 'anthropic', label: 'the Anthropic API', close: async () => {} };
  }
  // A model the user priced with --model-table is one the stand-in API serves too.
  const server = await startEmulator({ script: emulator.script, latency: emulator.latency, ...(catalogue ? { modelTable: catalogue } : {}) });
  return {
    baseURL: server.url,
    apiKey: 'emulator',
    kind: 'emulator',
    label: `the embedded emulator at ${server.url} (script ${emulator.script}${key ? '' : '; no ANTHROPIC_API_KEY'})`,
    close: () => server.close(),
  };
}
