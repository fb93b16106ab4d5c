import { ForkcacheError } from '../../../core/util/errors.ts';
import { invalidRequest } from '../api-error.ts';
import { claudeCodeModel } from './claude-code.ts';
import { aiSdkParentModel } from './ai-sdk-parent.ts';
import { echoModel } from './echo.ts';
import { hostToolsModel } from './host-tools.ts';
import { hostileModel } from './hostile.ts';
import { refactorModel } from './refactor.ts';
import { SCRIPT_HEADER, type ScriptedModel } from './types.ts';

/** The scripted models every emulator knows by name. */
export const BUILTIN_SCRIPTS: Readonly<Record<string, ScriptedModel>> = Object.freeze({
  echo: echoModel,
  refactor: refactorModel,
  'claude-code': claudeCodeModel,
  'host-tools': hostToolsModel,
  'ai-sdk': aiSdkParentModel,
  hostile: hostileModel,
});

export type ScriptList = Readonly<Record<string, ScriptedModel>> | readonly ScriptedModel[];

/** Named scripted models plus the default one; resolves the per-request header. */
export class ScriptRegistry {
  readonly #byName = new Map<string, ScriptedModel>();
  readonly #default: ScriptedModel;

  constructor(defaultScript: string | ScriptedModel = 'echo', extra: ScriptList = {}) {
    for (const [name, model] of Object.entries(BUILTIN_SCRIPTS)) this.#byName.set(name, model);
    const entries = Array.isArray(extra) ? extra.map((m) => [m.name, m] as const) : Object.entries(extra);
    for (const [name, model] of entries) {
      if (typeof model?.respond !== 'function') {
        throw new ForkcacheError('INVALID_OPTION', `scripts.${name}: expected a ScriptedModel with a respond() method`);
      }
      this.#byName.set(name, model);
    }
    if (typeof defaultScript === 'string') {
      const found = this.#byName.get(defaultScript);
      if (!found)
        throw new ForkcacheError(
          'INVALID_OPTION',
          `script: unknown scripted model "${defaultScript}" (known: ${this.names().join(', ')})`,
        );
      this.#default = found;
    } else {
      if (typeof defaultScript?.respond !== 'function')
        throw new ForkcacheError('INVALID_OPTION', 'script: expected a name or a ScriptedModel');
      this.#default = defaultScript;
      if (!this.#byName.has(defaultScript.name)) this.#byName.set(defaultScript.name, defaultScript);
    }
  }

  names(): string[] {
    return [...this.#byName.keys()];
  }

  /** The model for a request: the header's choice, else the default. Unknown name → 400. */
  resolve(header: string | undefined): ScriptedModel {
    if (header === undefined || header.trim() === '') return this.#default;
    const found = this.#byName.get(header.trim());
    if (!found)
      throw invalidRequest(`${SCRIPT_HEADER}: unknown scripted model "${header}" (known: ${this.names().join(', ')})`);
    return found;
  }
}
