// An agent embedded in a script: Lua tools (the built-in read + the bar-chart example) and one TS tool.
//
//   ANTHROPIC_API_KEY=... node examples/embed.mjs "Chart 3, 1, 4, 1, 5 and tell me what you see"
//   node examples/embed.mjs --api openai-chat --base-url http://127.0.0.1:8080/v1 --model my-vlm --image "..."
//
// Run `npm run build` first (this imports the built package).
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import {
  Agent,
  createProvider,
  defineTool,
  LuaToolSource,
  resolveModel,
  ToolRegistry,
} from '../dist/index.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    api: { type: 'string', default: 'anthropic-messages' },
    model: { type: 'string' },
    'base-url': { type: 'string' },
    image: { type: 'boolean', default: false },
  },
});
const defaults = {
  'anthropic-messages': 'claude-sonnet-4-5',
  'openai-chat': 'gpt-5',
  'openai-responses': 'gpt-5',
  gemini: 'gemini-2.5-flash',
};
const model = resolveModel(values.model ?? defaults[values.api], {
  api: values.api,
  ...(values.image ? { input: { image: true } } : {}),
});

const lua = await LuaToolSource.fromDir(path.join(here, 'tools'), {
  includeBuiltins: true,
  workspaceRoot: path.join(here, 'workspace'),
});
const clock = defineTool({
  name: 'clock',
  description: 'The current date and time (ISO 8601, UTC).',
  inputSchema: { type: 'object', properties: {}, additionalProperties: false },
  invoke: () => new Date().toISOString(),
});

const agent = new Agent({
  provider: createProvider({
    api: values.api,
    ...(values['base-url'] ? { baseUrl: values['base-url'] } : {}),
  }),
  model,
  tools: new ToolRegistry([lua, [clock]]),
  workspaceRoot: path.join(here, 'workspace'),
  system: 'You are a concise assistant. Use the tools when they help.',
});
agent.subscribe((e) => {
  if (e.type === 'message_delta' && e.delta.type === 'text_delta') process.stdout.write(e.delta.text);
  if (e.type === 'tool_call_start') console.error(`\n[${e.toolName}] ${JSON.stringify(e.input)}`);
  if (e.type === 'tool_media_processed')
    console.error(`[${e.toolName}] ${e.mediaType} ${e.width}x${e.height}`);
  if (e.type === 'warning') console.error(`warning: ${e.warning.message}`);
});

const result = await agent.prompt(
  positionals.join(' ') || 'Draw a bar chart of 3, 1, 4, 1, 5 and describe it.',
);
process.stdout.write('\n');
if (result.error) {
  console.error(`error: ${result.error.message}`);
  process.exitCode = 1;
}
