import type { ModelEntry } from '../../../core/models/catalogue.ts';
import type { MessagesRequest, StopReason } from '../types.ts';

/** One block of a scripted assistant turn. A tool_use without `id` gets a deterministic one. */
export type ScriptBlock =
  { type: 'text'; text: string } | { type: 'tool_use'; name: string; input: Record<string, unknown>; id?: string };

/** What a scripted model answers. `stop_reason` defaults to tool_use / end_turn by content. */
export interface ScriptedTurn {
  content: ScriptBlock[];
  stop_reason?: StopReason;
}

export interface ScriptInput {
  /** The request as the client sent it (already validated). Do not mutate. */
  request: Readonly<MessagesRequest>;
  /** The model-table entry of `request.model`. The script's behaviour need not depend on it. */
  model: ModelEntry;
}

/**
 * The emulator's "brain": given a request, produce the assistant turn. Scripted models are
 * test doubles, not language models: they follow fixed rules or fixtures. Implementations
 * should be stateless (derive the next step from the conversation), so that the same request
 * always gets the same turn — unless, like `ReplayModel`, they are recordings consumed in order.
 *
 * @example
 * const shout: ScriptedModel = {
 *   name: 'shout',
 *   respond: ({ request }) => ({ content: [{ type: 'text', text: String(request.messages.length) }] }),
 * };
 * await startEmulator({ scripts: { shout }, script: 'shout' });
 */
export interface ScriptedModel {
  readonly name: string;
  respond(input: ScriptInput): ScriptedTurn | Promise<ScriptedTurn>;
}

/** Request header that picks the scripted model for one request. */
export const SCRIPT_HEADER = 'x-forkcache-script';
