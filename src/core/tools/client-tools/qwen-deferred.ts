/*
 * Qwen Code reaches the tools it does not declare up front through `tool_search` (the schema,
 * as text in a tool result) and `tool_call` (`{ name, arguments }`). Both are plain tool calls
 * in the fork's own turns, after the cached prefix: a fork loads `edit` or `run_shell_command`
 * this way without changing a byte of the parent's array. The schemas below are the ones
 * forkcache runs (qwen-code.ts), written out as Qwen Code describes them.
 */

interface Deferred {
  readonly description: string;
  readonly parameters: Record<string, unknown>;
}

const str = (description: string) => ({ type: 'string', description });

const QWEN_DEFERRED: Readonly<Record<string, Deferred>> = {
  edit: {
    description:
      'Replaces text within a file. By default replaces a single occurrence; set replace_all to replace every one. old_string must match the file exactly, whitespace included.',
    parameters: {
      type: 'object',
      properties: {
        file_path: str('The absolute path to the file to modify.'),
        old_string: str('The exact literal text to replace.'),
        new_string: str('The exact literal text to replace old_string with.'),
        replace_all: { type: 'boolean', description: 'Replace every occurrence of old_string (default false).' },
      },
      required: ['file_path', 'old_string', 'new_string'],
    },
  },
  write_file: {
    description: 'Writes content to a file, creating it (and missing directories) or overwriting it.',
    parameters: {
      type: 'object',
      properties: { file_path: str('The absolute path to the file to write.'), content: str('The content to write.') },
      required: ['file_path', 'content'],
    },
  },
  run_shell_command: {
    description: 'Executes a shell command with `bash -c` in the project directory and returns its output.',
    parameters: {
      type: 'object',
      properties: {
        command: str('Exact bash command to execute.'),
        description: str('Brief description of the command for the user.'),
        directory: str('The directory to run the command in, relative to the project root.'),
        is_background: {
          type: 'boolean',
          description: 'Run in the background (a fork always runs in the foreground).',
        },
      },
      required: ['command'],
    },
  },
  list_directory: {
    description: 'Lists the names of files and subdirectories directly within a directory.',
    parameters: {
      type: 'object',
      properties: { path: str('The absolute path to the directory to list.') },
      required: ['path'],
    },
  },
  read_many_files: {
    description:
      'Reads several files, given as paths or glob patterns, and returns their contents one after the other.',
    parameters: {
      type: 'object',
      properties: { paths: { type: 'array', items: { type: 'string' }, description: 'Paths or glob patterns.' } },
      required: ['paths'],
    },
  },
};

/** `select:a,b` picks by name; other queries match words of the names and descriptions. */
export function searchDeferred(query: string, maxResults: number, runnable: (name: string) => boolean): string {
  const names = Object.keys(QWEN_DEFERRED).filter(runnable);
  const picked = query.startsWith('select:')
    ? query
        .slice('select:'.length)
        .split(',')
        .map((n) => n.trim())
        .filter((n) => names.includes(n))
    : names.filter((n) => {
        const words = query.toLowerCase().split(/\s+/).filter(Boolean);
        const text = `${n} ${QWEN_DEFERRED[n]!.description}`.toLowerCase();
        return words.some((w) => text.includes(w));
      });
  const shown = picked.slice(0, maxResults);
  if (shown.length === 0)
    return `No deferred tools matched ${JSON.stringify(query)}. A fork can load: ${names.join(', ') || 'none'}.`;
  return shown
    .map((n) => `${n}: ${QWEN_DEFERRED[n]!.description}\nSchema: ${JSON.stringify(QWEN_DEFERRED[n]!.parameters)}`)
    .concat('Invoke one with tool_call: {"name": "<tool>", "arguments": {...}}.')
    .join('\n\n');
}
