// clients.mjs runs one case of a real JavaScript client against tollfree,
// as an application would, and prints what the client returned as one JSON
// object. It is run by the end-to-end tests (e2e/npm_clients_test.go):
//
//   node clients.mjs <case> <base URL>
//
// with the key in OPENAI_API_KEY. Chains: "agent" (tools, images,
// structured output), "vectors" (embeddings); TOLLFREE_MODEL names another
// chain for the typed cases (the keyless demo's "answer"). A client that
// throws prints {"error": "..."}; the tests then fail with it.
import OpenAI from 'openai';
import { zodResponseFormat, zodTextFormat } from 'openai/helpers/zod';
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, streamText, generateObject, embed, tool, stepCountIs } from 'ai';
import { ChatOpenAI } from '@langchain/openai';
import { HumanMessage, ToolMessage } from '@langchain/core/messages';
import { tool as lcTool } from '@langchain/core/tools';
import { z } from 'zod';

const [name, baseURL] = process.argv.slice(2);
const apiKey = process.env.OPENAI_API_KEY;
const model = process.env.TOLLFREE_MODEL || 'agent';
const weather = z.object({ city: z.string() });
const getWeather = (args) => ({ city: args.city, temp: 21 });
const png = 'data:image/png;base64,iVBORw0KGgo=';

const openai = () => new OpenAI({ baseURL, apiKey, maxRetries: 0, timeout: 60_000 });
const weatherTool = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'The weather in a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
  },
};

const cases = {
  // openai npm: chat.completions with tools, a tool loop of two turns.
  async 'openai-tools'() {
    const c = openai();
    const messages = [{ role: 'user', content: 'What is the weather in Paris?' }];
    const first = await c.chat.completions.create({ model: 'agent', messages, tools: [weatherTool] });
    const msg = first.choices[0].message;
    const call = msg.tool_calls[0];
    messages.push(msg, { role: 'tool', tool_call_id: call.id, content: JSON.stringify(getWeather(JSON.parse(call.function.arguments))) });
    const second = await c.chat.completions.create({ model: 'agent', messages, tools: [weatherTool] });
    return {
      finish1: first.choices[0].finish_reason, tool: call.function.name, args: JSON.parse(call.function.arguments), id: call.id,
      finish2: second.choices[0].finish_reason, text: second.choices[0].message.content, model: second.model,
    };
  },
  // openai npm: chat.completions with an image.
  async 'openai-image'() {
    const r = await openai().chat.completions.create({
      model: 'agent',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'What is in this image?' }, { type: 'image_url', image_url: { url: png } }] }],
    });
    return { text: r.choices[0].message.content, model: r.model };
  },
  // openai npm: responses.create, whole.
  async 'openai-responses'() {
    const r = await openai().responses.create({ model: 'agent', instructions: 'Be brief.', input: 'What does tollfree do?' });
    return { status: r.status, text: r.output_text, model: r.model, input_tokens: r.usage.input_tokens };
  },
  // openai npm: responses.create streamed, and the stream() helper's
  // finalResponse().
  async 'openai-responses-stream'() {
    const c = openai();
    const types = [];
    let deltas = '';
    for await (const ev of await c.responses.create({ model: 'agent', input: 'What does tollfree do?', stream: true })) {
      types.push(ev.type);
      if (ev.type === 'response.output_text.delta') deltas += ev.delta;
    }
    const helper = c.responses.stream({ model: 'agent', input: 'What does tollfree do?' });
    const final = await helper.finalResponse();
    return { types, deltas, final: final.output_text, status: final.status };
  },
  // openai npm: responses.create with a function tool loop of two turns.
  async 'openai-responses-tools'() {
    const c = openai();
    const tools = [{ type: 'function', name: 'get_weather', parameters: weatherTool.function.parameters, strict: true }];
    const input = [{ role: 'user', content: 'What is the weather in Paris?' }];
    const first = await c.responses.create({ model: 'agent', input, tools });
    const call = first.output.find((o) => o.type === 'function_call');
    input.push(call, { type: 'function_call_output', call_id: call.call_id, output: JSON.stringify(getWeather(JSON.parse(call.arguments))) });
    const second = await c.responses.create({ model: 'agent', input, tools });
    return { tool: call.name, args: JSON.parse(call.arguments), text: second.output_text, status: second.status };
  },
  // openai npm: chat.completions.parse with response_format json_schema
  // (zod).
  async 'openai-chat-parse'() {
    const r = await openai().chat.completions.parse({
      model,
      messages: [{ role: 'user', content: 'The weather in Paris, as JSON' }],
      response_format: zodResponseFormat(weather, 'weather'),
    });
    return { parsed: r.choices[0].message.parsed, text: r.choices[0].message.content };
  },
  // openai npm: responses.parse with text.format json_schema (zod).
  async 'openai-responses-schema'() {
    const r = await openai().responses.parse({
      model,
      input: 'The weather in Paris, as JSON',
      text: { format: zodTextFormat(weather, 'weather') },
    });
    return { parsed: r.output_parsed, text: r.output_text };
  },
  // openai npm: embeddings.create (base64 on the wire, decoded by the SDK).
  async 'openai-embeddings'() {
    const r = await openai().embeddings.create({ model: 'vectors', input: ['free tiers', 'a gateway'], dimensions: 768 });
    return { count: r.data.length, dims: r.data.map((d) => d.embedding.length), model: r.model, prompt_tokens: r.usage.prompt_tokens };
  },

  // The AI SDK's @ai-sdk/openai default provider: the Responses API.
  async 'aisdk-tools'() {
    const provider = createOpenAI({ baseURL, apiKey });
    const r = await generateText({
      model: provider('agent'),
      tools: { get_weather: tool({ description: 'The weather in a city', inputSchema: weather, execute: async (a) => getWeather(a) }) },
      stopWhen: stepCountIs(3),
      prompt: 'What is the weather in Paris?',
    });
    return { text: r.text, steps: r.steps.length, calls: r.steps.flatMap((s) => s.toolCalls.map((c) => c.toolName)), finish: r.finishReason };
  },
  async 'aisdk-stream'() {
    const provider = createOpenAI({ baseURL, apiKey });
    const r = streamText({ model: provider('agent'), prompt: 'What does tollfree do?' });
    let text = '';
    for await (const t of r.textStream) text += t;
    return { text, finish: await r.finishReason };
  },
  async 'aisdk-object'() {
    const provider = createOpenAI({ baseURL, apiKey });
    const r = await generateObject({ model: provider(model), schema: weather, prompt: 'The weather in Paris' });
    return { object: r.object };
  },
  async 'aisdk-embed'() {
    const provider = createOpenAI({ baseURL, apiKey });
    const r = await embed({ model: provider.embedding('vectors'), value: 'free tiers' });
    return { dims: r.embedding.length };
  },

  // LangChain JS ChatOpenAI: bindTools, and withStructuredOutput by
  // function calling and by JSON schema.
  async 'langchain-tools'() {
    const llm = new ChatOpenAI({ model: 'agent', apiKey, configuration: { baseURL }, maxRetries: 0 });
    const wt = lcTool(async (a) => JSON.stringify(getWeather(a)), { name: 'get_weather', description: 'The weather in a city', schema: weather });
    const bound = llm.bindTools([wt]);
    const messages = [new HumanMessage('What is the weather in Paris?')];
    const first = await bound.invoke(messages);
    const call = first.tool_calls[0];
    messages.push(first, new ToolMessage({ tool_call_id: call.id, content: await wt.invoke(call.args) }));
    const second = await bound.invoke(messages);
    return { tool: call.name, args: call.args, text: second.content };
  },
  async 'langchain-structured'() {
    const llm = new ChatOpenAI({ model, apiKey, configuration: { baseURL }, maxRetries: 0 });
    const byTool = await llm.withStructuredOutput(weather, { method: 'functionCalling', name: 'weather' }).invoke('The weather in Paris');
    const bySchema = await llm.withStructuredOutput(weather, { method: 'jsonSchema', name: 'weather' }).invoke('The weather in Paris');
    return { functionCalling: byTool, jsonSchema: bySchema };
  },
};

if (!cases[name] || !baseURL) {
  console.error(`usage: node clients.mjs <${Object.keys(cases).join('|')}> <base URL>`);
  process.exit(2);
}
try {
  console.log(JSON.stringify(await cases[name]()));
} catch (err) {
  console.log(JSON.stringify({ error: String(err && err.stack ? err.stack : err) }));
}
