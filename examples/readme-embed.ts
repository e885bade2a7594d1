// The README's embedding example, verbatim: `npm test` type-checks it against the built package.
import { Agent, createProvider, defineTool, LuaToolSource, SessionLog, ToolRegistry } from 'libpanto';

// `ignoreMissing`: no ./tools folder yet is fine (the built-in tools still load).
const lua = await LuaToolSource.fromDir('./tools', {
  includeBuiltins: true,
  ignoreMissing: true,
  workspaceRoot: process.cwd(),
});
const clock = defineTool({
  name: 'clock',
  description: 'The current time (ISO 8601).',
  inputSchema: { type: 'object', properties: {} },
  invoke: () => new Date().toISOString(),
});
const agent = new Agent({
  provider: createProvider({ api: 'anthropic-messages' }), // ANTHROPIC_API_KEY from the environment
  model: 'claude-sonnet-4-5',
  tools: new ToolRegistry([lua, [clock]]),
  // Created on the first run, resumed on the next ones.
  session: await SessionLog.openOrCreate('session.jsonl', { model: 'claude-sonnet-4-5' }),
});
agent.subscribe((e) => {
  if (e.type === 'message_delta' && e.delta.type === 'text_delta') process.stdout.write(e.delta.text);
  if (e.type === 'warning') console.warn(e.warning.message);
});
await agent.prompt('Read screenshot.png and tell me what is wrong with the layout.');
agent.session?.close();
