import { sumUsage } from '../ledger/usage.ts';
import type { ForkResult } from './fork-handle.ts';

/** XML text escaping: a fork's output can never close or forge a notification tag. */
function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/**
 * The message a parent receives when a fork finishes, delivered once per fork as user text
 * (the spawn call itself returned the placeholder at once). Every value is XML-escaped.
 */
export function formatTaskNotification(result: ForkResult): string {
  const usage = sumUsage(result.requests.map((r) => r.usage));
  const summary = `Fork "${result.directive.slice(0, 80)}" ${result.status}${result.error ? `: ${result.error.message}` : ''}`;
  const fields: [string, string][] = [
    ['task-id', result.forkId],
    ['status', result.status],
    ['summary', summary],
    ['result', result.finalText],
    [
      'usage',
      `turns: ${result.turns}, tool calls: ${result.toolCalls}, input: ${usage.input_tokens}, cache read: ${usage.cache_read_input_tokens}, cache write: ${usage.cache_creation_input_tokens}, output: ${usage.output_tokens}`,
    ],
  ];
  if (result.transcriptPath) fields.push(['output-file', result.transcriptPath]);
  return `<task-notification>\n${fields.map(([tag, value]) => `<${tag}>${escapeXml(value)}</${tag}>`).join('\n')}\n</task-notification>`;
}
