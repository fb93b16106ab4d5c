import { runBash } from '../sandbox/bash.ts';
import type { ToolContext } from '../context.ts';
import { editFile } from '../files/edit-file.ts';
import { glob } from '../files/glob.ts';
import { grep } from '../files/grep.ts';
import { listDir } from '../files/list-dir.ts';
import { readFile } from '../files/read-file.ts';
import { TOOL_INPUT_SCHEMAS } from '../schemas.ts';
import { writeFile } from '../files/write-file.ts';
import { SPAWN_TOOL_NAME } from '../../wire/fork-text.ts';
import { EXECUTABLE_TOOL_NAMES, READ_ONLY_TOOL_NAMES, type ExecutableToolName } from '../../wire/tool-names.ts';
import { RUN } from './handler.ts';
import type { ClientTool, ToolSet } from './types.ts';

type Handler = (input: never, ctx: ToolContext) => Promise<string>;

const HANDLERS: Readonly<Record<ExecutableToolName, Handler>> = {
  read_file: readFile,
  list_dir: listDir,
  grep,
  glob,
  edit_file: editFile,
  write_file: writeFile,
  bash: runBash,
};

const READ_ONLY: ReadonlySet<string> = new Set(READ_ONLY_TOOL_NAMES);

/** forkcache's own tools (TOOL_DECLARATIONS): each is its own capability; paths go to the jail as written. */
export const FORKCACHE_TOOL_SET: ToolSet = {
  name: 'forkcache',
  tools: new Map(
    EXECUTABLE_TOOL_NAMES.map((name): [string, ClientTool] => [
      name,
      {
        name,
        capability: name,
        readOnly: READ_ONLY.has(name),
        input: TOOL_INPUT_SCHEMAS[name],
        [RUN]: (input, io) => (HANDLERS[name] as (i: unknown, c: ToolContext) => Promise<string>)(input, io.ctx),
      },
    ]),
  ),
  spawn: [SPAWN_TOOL_NAME],
  refused: {},
  clientRoot: () => undefined,
};
