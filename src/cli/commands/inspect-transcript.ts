import type { Command } from 'commander';
import { claudeTokenizer } from '../../integrations/emulator/tokens/tokenizer.ts';
import { markerPaths } from '../../core/fork/history.ts';
import { importClaudeTranscript } from '../importers/claude-transcript.ts';
import { parseFlags } from '../flags.ts';
import { flag, flagSchema } from '../flag-table.ts';
import { printOut } from '../terminal-safe.ts';

const optionsSchema = flagSchema(['json', 'model']);

/**
 * `forkcache inspect-transcript FILE`: the parent a session transcript rebuilds to, without
 * running anything, so a user can see whether forks will share the session's cache before
 * paying for them. Token counts are the emulator's tokenizer over each part's JSON (an
 * estimate); the expected cached figure is the session's own usage.
 */
export function registerInspectTranscriptCommand(program: Command): void {
  program
    .command('inspect-transcript')
    .description(
      'print the parent rebuilt from a Claude Code / Qwen Code session transcript (blocks, markers, tokens, approximations), without running',
    )
    .argument('<file>', 'session transcript (.jsonl)')
    .addOption(flag('model'))
    .addOption(flag('json'))
    .action((file: string, raw: Record<string, unknown>) => {
      const opts = parseFlags(optionsSchema, raw);
      const { snapshot, notes, source, expectedCachedTokens, route } = importClaudeTranscript(file, {
        model: opts.model,
      });
      const tokens = (value: unknown): number =>
        value === undefined ? 0 : claudeTokenizer.count(JSON.stringify(value));
      const system =
        snapshot.system === undefined ? [] : typeof snapshot.system === 'string' ? [snapshot.system] : snapshot.system;
      const roles = snapshot.messages.map((m) => m.role as string);
      const blocks = snapshot.messages.reduce((n, m) => n + (typeof m.content === 'string' ? 1 : m.content.length), 0);
      const shape = {
        file,
        source,
        model: snapshot.model,
        system: { blocks: system.length, tokens: tokens(snapshot.system) },
        tools: { count: snapshot.tools?.length ?? 0, tokens: tokens(snapshot.tools) },
        messages: { count: roles.length, blocks, roles: roles.join(','), tokens: tokens(snapshot.messages) },
        markers: markerPaths(snapshot),
        settings: { thinking: snapshot.thinking ?? null, output_config: snapshot.output_config ?? null },
        expected_cached_tokens: expectedCachedTokens ?? null,
        route: route === undefined ? null : { provider: route.provider, credential: route.credential },
        notes,
      };
      if (opts.json) {
        printOut(`${JSON.stringify(shape)}\n`);
        return;
      }
      const out = [
        `${file}: ${source === 'wire' ? "the session's last wire request (exact)" : source === 'qwen' ? 'a Qwen Code chat (approximated: no system, tools or reminders recorded)' : 'approximated from the message records'}`,
        `model ${shape.model}`,
        `system   ${shape.system.blocks} block(s), ~${shape.system.tokens} tokens`,
        `tools    ${shape.tools.count}, ~${shape.tools.tokens} tokens`,
        `messages ${shape.messages.count} (${shape.messages.roles}), ${blocks} block(s), ~${shape.messages.tokens} tokens`,
        `markers  ${shape.markers.length ? shape.markers.join(', ') : 'none'}`,
        ...(route === undefined ? [] : [`route    ${route.provider} (credential ${route.credential})`]),
        `cache    ${expectedCachedTokens === undefined ? 'the transcript reports no usage' : `the session's cache should hold ${expectedCachedTokens} tokens of this prefix`}`,
        ...notes.map((n) => `note: ${n}`),
      ];
      printOut(`${out.join('\n')}\n`);
    });
}
