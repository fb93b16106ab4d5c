import type Anthropic from '@anthropic-ai/sdk';
import { ForkcacheError } from '../util/errors.ts';
import { SPAWN_TOOL_NAME } from '../wire/fork-text.ts';
import { deepFreeze } from '../util/deep-freeze.ts';
import { TOOL_NAMES } from '../wire/tool-names.ts';

/*
 * The JSON schemas are written out by hand rather than generated from the zod schemas: their
 * bytes are part of every request's cached prefix, and a generator's output may change with a
 * zod upgrade. A test checks that both describe the same fields.
 */

const PATH_DESCRIPTION = 'Path relative to the workspace root.';

const declarations: Anthropic.Tool[] = [
  {
    name: 'read_file',
    description:
      'Read a text file of the workspace and return its text exactly. Pass `offset` (1-based first line) and `limit` (number of lines) to read a part. What does not fit in the read limit is cut after the last whole line that fits, and the result then ends with a line `[truncated: … Read the rest with offset: N]`: read on from line N. Binary files are refused.',
    input_schema: {
      type: 'object',
      properties: {
        path: { type: 'string', description: PATH_DESCRIPTION },
        offset: { type: 'integer', minimum: 1, description: 'First line to read, 1-based.' },
        limit: { type: 'integer', minimum: 1, description: 'Number of lines to read.' },
      },
      required: ['path'],
      additionalProperties: false,
    },
  },
  {
    name: 'list_dir',
    description:
      'List a directory of the workspace: one entry per line, sorted. Directories end with `/`, symbolic links with `@`.',
    input_schema: {
      type: 'object',
      properties: { path: { type: 'string', description: PATH_DESCRIPTION } },
      required: ['path'],
      additionalProperties: false,
    },
  },
  {
    name: 'grep',
    description:
      "Search file contents line by line with a regular expression (RE2 syntax: JavaScript's, without lookaround or backreferences; matching takes linear time). Returns `file:line:text` lines, files relative to the workspace root, sorted; output is capped. `path` (default: the workspace root) is a directory or a file. `glob` filters files: without `/` it matches the file name, otherwise the path relative to `path`. Binary files, files over the size limit and symbolic links are skipped.",
    input_schema: {
      type: 'object',
      properties: {
        pattern: {
          type: 'string',
          description: 'Regular expression (RE2 syntax), without slashes or flags; `(?i)` makes it case-insensitive.',
        },
        path: { type: 'string', description: 'Directory or file to search, relative to the workspace root.' },
        glob: { type: 'string', description: 'File filter, e.g. `*.ts` or `src/**/*.md`.' },
      },
      required: ['pattern'],
      additionalProperties: false,
    },
  },
  {
    name: 'glob',
    description:
      'Find files by a pattern relative to the workspace root: `*` and `?` match within one path segment, `**` matches any number of segments, `{a,b}` matches either alternative, `[abc]` one character. Returns one path per line, sorted; output is capped. Symbolic links are listed but not followed.',
    input_schema: {
      type: 'object',
      properties: { pattern: { type: 'string', description: 'Glob pattern, e.g. `src/**/*.{ts,tsx}`.' } },
      required: ['pattern'],
      additionalProperties: false,
    },
  },
  {
    name: 'edit_file',
    description:
      'Replace exact text in a file. `old_string` must occur exactly once unless `replace_all` is true: include enough surrounding lines to make it unique. Whitespace and indentation must match exactly. `new_string` must differ from `old_string`.',
    input_schema: {
      type: 'object',
      properties: {
        path: { type: 'string', description: PATH_DESCRIPTION },
        old_string: { type: 'string', description: 'The exact text to replace.' },
        new_string: { type: 'string', description: 'The replacement text.' },
        replace_all: { type: 'boolean', description: 'Replace every occurrence (default false).' },
      },
      required: ['path', 'old_string', 'new_string'],
      additionalProperties: false,
    },
  },
  {
    name: 'write_file',
    description: 'Create or overwrite a file of the workspace with `content`. Missing parent directories are created.',
    input_schema: {
      type: 'object',
      properties: {
        path: { type: 'string', description: PATH_DESCRIPTION },
        content: { type: 'string', description: 'The complete new file text.' },
      },
      required: ['path', 'content'],
      additionalProperties: false,
    },
  },
  {
    name: 'bash',
    description:
      'Run a command with `bash -c` in the workspace root and return its output. Only available to forks allowed to run commands; otherwise the call is refused.',
    input_schema: {
      type: 'object',
      properties: { command: { type: 'string', description: 'The shell command.' } },
      required: ['command'],
      additionalProperties: false,
    },
  },
  {
    name: SPAWN_TOOL_NAME,
    description:
      'Start a fork subagent that inherits this conversation and carries out `directive` in the background. Returns at once; the fork reports back later in a notification. A fork cannot start forks itself.',
    input_schema: {
      type: 'object',
      properties: {
        directive: { type: 'string', description: 'What the fork must do, self-contained.' },
        description: { type: 'string', description: 'A short label for the task (3-5 words).' },
        subagent_type: {
          type: 'string',
          description: 'A named agent type to run instead of a fork (it does not share the cache).',
        },
      },
      required: ['directive'],
      additionalProperties: false,
    },
  },
];

/**
 * The tool array every forkcache request declares: Anthropic tool definitions in a fixed order
 * (`TOOL_NAMES`), deeply frozen, so `JSON.stringify(TOOL_DECLARATIONS)` gives the same bytes
 * for the life of the process and across processes of the same version.
 *
 * It is the same for every fork whatever the fork may execute (cache parity: the tool array is
 * part of the cached prefix). What a fork may run is decided at execution time by the
 * allowlist of {@link createToolExecutor}; the spawn tool `agent` stays declared for children
 * and is refused when they call it.
 *
 * @example
 * const body = { model, system, tools: TOOL_DECLARATIONS, messages };
 */
export const TOOL_DECLARATIONS: readonly Anthropic.Tool[] = deepFreeze(declarations);

// A reorder or a missing entry would silently change every prefix hash: fail at import.
if (declarations.map((d) => d.name).join() !== TOOL_NAMES.join()) {
  throw new ForkcacheError('INTERNAL', 'TOOL_DECLARATIONS is out of step with TOOL_NAMES');
}
