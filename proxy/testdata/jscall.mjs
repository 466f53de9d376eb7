// One call through the proxy with a JavaScript SDK, its own retries on
// (the default: 2). Usage: node jscall.mjs anthropic|openai BASE_URL
// Prints "ok TEXT" or "error MESSAGE".
const [sdk, base] = process.argv.slice(2);
try {
  let text;
  if (sdk === 'anthropic') {
    const { default: Anthropic } = await import('@anthropic-ai/sdk');
    const client = new Anthropic({ baseURL: base, apiKey: 'sk-test' });
    const m = await client.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] });
    text = m.content[0].text;
  } else {
    const { default: OpenAI } = await import('openai');
    const client = new OpenAI({ baseURL: base + '/v1', apiKey: 'sk-test' });
    const r = await client.chat.completions.create({ model: 'gpt-5', messages: [{ role: 'user', content: 'hi' }] });
    text = r.choices[0].message.content;
  }
  console.log('ok ' + text);
} catch (e) {
  console.log('error ' + (e && e.message));
}
