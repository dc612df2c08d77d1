// stream.mjs streams one chat completion through the official openai npm
// client, as an application would, and reports what that client saw. It is
// run by the root package's end-to-end tests (rescue_clients_test.go):
//
//   node stream.mjs <create|helper> <base URL> <model>
//
// with the key in OPENAI_API_KEY. "create" iterates
// client.chat.completions.create({stream: true}); "helper" iterates the
// SDK's client.chat.completions.stream() helper and then asks it for
// finalChatCompletion(), the completion it accumulated from the chunks.
//
// Standard output is JSON lines: {"type":"chunk","content_chunks":n} as each
// chunk with content arrives (so that the test can move its fake clock at a
// known point of the stream), then one {"type":"summary",...} with the text,
// the finish_reason, the counts, the SSE comment lines and [DONE] seen in
// the raw body, and the error the client raised, if any.
import OpenAI from 'openai';

const [mode, baseURL, model] = process.argv.slice(2);
if (!['create', 'helper'].includes(mode) || !baseURL || !model) {
  console.error('usage: node stream.mjs <create|helper> <base URL> <model>');
  process.exit(2);
}

// tap hands the client the response as it came, and keeps a copy of the
// raw bytes, to count what the client's SSE parser had to cope with.
let raw = '';
let rawDone = Promise.resolve();
async function tap(url, init) {
  const res = await fetch(url, init);
  if (!res.body) {
    return res;
  }
  const [mine, copy] = res.body.tee();
  rawDone = (async () => {
    const dec = new TextDecoder();
    try {
      for await (const part of copy) {
        raw += dec.decode(part, { stream: true });
      }
    } catch {
      // The client's side reports the failure.
    }
  })();
  return new Response(mine, { status: res.status, statusText: res.statusText, headers: res.headers });
}

const client = new OpenAI({ baseURL, apiKey: process.env.OPENAI_API_KEY, maxRetries: 0, timeout: 60_000, fetch: tap });
const params = {
  model,
  messages: [{ role: 'user', content: 'What does tollfree do?' }],
  stream_options: { include_usage: true },
};

const out = { type: 'summary', mode, text: '', finish_reason: null, model: null, chunks: 0, content_chunks: 0, usage: null, error: null };

function add(chunk) {
  out.chunks++;
  out.model ??= chunk.model;
  if (chunk.usage) {
    out.usage = chunk.usage;
  }
  const choice = chunk.choices?.[0];
  if (!choice) {
    return;
  }
  if (choice.delta?.content) {
    out.text += choice.delta.content;
    out.content_chunks++;
    console.log(JSON.stringify({ type: 'chunk', content_chunks: out.content_chunks }));
  }
  if (choice.finish_reason) {
    out.finish_reason = choice.finish_reason;
  }
}

try {
  if (mode === 'create') {
    const stream = await client.chat.completions.create({ ...params, stream: true });
    for await (const chunk of stream) {
      add(chunk);
    }
  } else {
    const stream = client.chat.completions.stream(params);
    for await (const chunk of stream) {
      add(chunk);
    }
    const final = await stream.finalChatCompletion();
    const choice = final.choices[0];
    out.final = { text: choice?.message?.content ?? null, finish_reason: choice?.finish_reason ?? null, usage: final.usage ?? null };
  }
} catch (err) {
  out.error = `${err?.name ?? 'Error'}: ${err?.message ?? err}`;
}
await rawDone;
const lines = raw.split(/\r?\n/);
out.comments = lines.filter((l) => l.startsWith(':')).length;
out.done = lines.includes('data: [DONE]');
console.log(JSON.stringify(out));
