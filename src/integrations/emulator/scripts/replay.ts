import { z } from 'zod';
import { ForkcacheError } from '../../../core/util/errors.ts';
import { readJsonFile } from '../../../core/util/json-file.ts';
import { parseOrThrow } from '../../../core/util/validation.ts';
import { lastUserText } from './conversation.ts';
import type { ScriptBlock, ScriptedModel, ScriptedTurn, ScriptInput } from './types.ts';

const blockSchema = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('text'), text: z.string().min(1) }),
  z.strictObject({
    type: z.literal('tool_use'),
    name: z.string().min(1),
    input: z.record(z.string(), z.unknown()),
    id: z.string().min(1).optional(),
  }),
]);

const turnSchema = z.strictObject({
  /** Checks on the request this turn answers; a mismatch fails the call loudly. */
  expect: z
    .strictObject({
      lastUserTextIncludes: z.string().optional(),
      messages: z.number().int().positive().optional(),
      model: z.string().optional(),
      tools: z.array(z.string()).optional(),
    })
    .optional(),
  content: z.array(blockSchema),
  stop_reason: z.enum(['end_turn', 'max_tokens', 'stop_sequence', 'tool_use', 'pause_turn', 'refusal']).optional(),
});

/** A replay fixture: the assistant turns to give, in order. */
const replayFixtureSchema = z.strictObject({
  description: z.string().optional(),
  turns: z.array(turnSchema).min(1),
});

export type ReplayFixture = z.infer<typeof replayFixtureSchema>;

export interface ReplayOptions {
  /** Registered under this name (default `replay`). */
  name?: string;
  /** Named in error messages (e.g. the fixture's file). */
  source?: string;
}

/**
 * `replay`: answers with the turns of a JSON fixture, one per request, in order. A recording
 * fake: an unexpected call (no turns left, or the request fails a turn's `expect`) is an error
 * the client sees as a 500 with the reason, and `assertConsumed()` fails while turns remain.
 */
export class ReplayModel implements ScriptedModel {
  readonly name: string;
  readonly #turns: ReplayFixture['turns'];
  readonly #source: string;
  readonly #failures: string[] = [];
  #next = 0;

  constructor(fixture: unknown, options: ReplayOptions = {}) {
    this.#source = options.source ?? 'replay fixture';
    this.#turns = parseOrThrow(replayFixtureSchema, fixture, 'INVALID_OPTION', this.#source).turns;
    this.name = options.name ?? 'replay';
  }

  /** Load a fixture file (JSON). */
  static fromFile(path: string, options: Omit<ReplayOptions, 'source'> = {}): ReplayModel {
    return new ReplayModel(readJsonFile(path, 'replay fixture', 'INVALID_OPTION'), {
      ...options,
      source: `replay fixture ${path}`,
    });
  }

  get consumed(): number {
    return this.#next;
  }

  get remaining(): number {
    return this.#turns.length - this.#next;
  }

  /** Every failed call so far (also reported to the client). */
  get failures(): readonly string[] {
    return [...this.#failures];
  }

  #fail(message: string): never {
    this.#failures.push(message);
    throw new ForkcacheError('EMULATOR_REPLAY_MISMATCH', message, {
      data: { source: this.#source, call: this.#next + 1 },
    });
  }

  respond({ request, model }: ScriptInput): ScriptedTurn {
    const index = this.#next;
    const turn = this.#turns[index];
    if (!turn)
      this.#fail(`${this.#source}: unexpected call #${index + 1}, the fixture has only ${this.#turns.length} turn(s)`);
    const expect = turn.expect ?? {};
    const at = `${this.#source}: call #${index + 1}`;
    const userText = lastUserText(request.messages)?.text ?? '';
    if (expect.lastUserTextIncludes !== undefined && !userText.includes(expect.lastUserTextIncludes)) {
      this.#fail(
        `${at}: expected the last user text to include ${JSON.stringify(expect.lastUserTextIncludes)}, got ${JSON.stringify(userText.slice(0, 200))}`,
      );
    }
    if (expect.messages !== undefined && request.messages.length !== expect.messages) {
      this.#fail(`${at}: expected ${expect.messages} message(s), got ${request.messages.length}`);
    }
    if (expect.model !== undefined && expect.model !== request.model && expect.model !== model.id) {
      this.#fail(`${at}: expected model ${expect.model}, got ${request.model}`);
    }
    const tools = (request.tools ?? []).map((t) => t.name);
    if (expect.tools !== undefined && expect.tools.join() !== tools.join()) {
      this.#fail(`${at}: expected tools [${expect.tools.join(', ')}], got [${tools.join(', ')}]`);
    }
    this.#next++;
    const content: ScriptBlock[] = turn.content.map((b) =>
      b.type === 'text'
        ? { type: 'text', text: b.text }
        : {
            type: 'tool_use',
            name: b.name,
            input: structuredClone(b.input),
            ...(b.id === undefined ? {} : { id: b.id }),
          },
    );
    return turn.stop_reason === undefined ? { content } : { content, stop_reason: turn.stop_reason };
  }

  /** Throw unless every turn was used and no call failed. */
  assertConsumed(): void {
    if (this.#failures.length > 0) {
      throw new ForkcacheError(
        'EMULATOR_REPLAY_MISMATCH',
        `${this.#source}: ${this.#failures.length} call(s) failed: ${this.#failures.join(' | ')}`,
      );
    }
    if (this.remaining > 0) {
      throw new ForkcacheError(
        'EMULATOR_REPLAY_UNCONSUMED',
        `${this.#source}: ${this.remaining} of ${this.#turns.length} turn(s) were never requested`,
        {
          data: { remaining: this.remaining },
        },
      );
    }
  }
}
