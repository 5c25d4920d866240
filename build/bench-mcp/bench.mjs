// Measures `tools/call` on two MCP servers over loopback, one after the
// other, in the same way: Rerun's list_agents and the official TypeScript
// SDK's example server (server-everything) echo. Each client initializes a
// session, then makes N sequential calls.
//   node bench.mjs RERUN_URL RERUN_KEY EVERYTHING_URL [N]
const [rerunURL, key, everythingURL, n = '2000'] = process.argv.slice(2);
const N = Number(n);

async function rpc(url, headers, body) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok && res.status !== 202) throw new Error(`${url}: ${res.status} ${text.slice(0, 200)}`);
  return { res, text };
}

async function measure(name, url, headers, call) {
  const init = await rpc(url, headers, {
    jsonrpc: '2.0', id: 0, method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench', version: '1' } },
  });
  const session = init.res.headers.get('mcp-session-id');
  const h = session ? { ...headers, 'mcp-session-id': session } : headers;
  await rpc(url, h, { jsonrpc: '2.0', method: 'notifications/initialized' });
  const lat = [];
  for (let i = 0; i < 50; i++) await rpc(url, h, { jsonrpc: '2.0', id: i + 1, method: 'tools/call', params: call }); // warm up
  const start = performance.now();
  for (let i = 0; i < N; i++) {
    const t0 = performance.now();
    const { text } = await rpc(url, h, { jsonrpc: '2.0', id: i + 100, method: 'tools/call', params: call });
    lat.push(performance.now() - t0);
    if (text.includes('"isError":true')) throw new Error(`${name}: tool error ${text.slice(0, 200)}`);
  }
  const secs = (performance.now() - start) / 1000;
  lat.sort((a, b) => a - b);
  const r = { name, perSecond: N / secs, p50: lat[Math.floor(N * 0.5)], p99: lat[Math.floor(N * 0.99)] };
  console.log(`${name}: ${r.perSecond.toFixed(0)} calls/s, p50 ${r.p50.toFixed(2)} ms, p99 ${r.p99.toFixed(2)} ms (${N} sequential calls)`);
  return r;
}

const rerun = await measure('rerun tools/call list_agents (20 agents)', `${rerunURL}/api/mcp/account`, { Authorization: `Bearer ${key}` },
  { name: 'list_agents', arguments: {} });
const ref = await measure('server-everything tools/call echo', `${everythingURL}/mcp`, {}, { name: 'echo', arguments: { message: 'hello' } });
console.log(`ratio rerun/server-everything: throughput ${(rerun.perSecond / ref.perSecond).toFixed(2)}×, p99 ${(rerun.p99 / ref.p99).toFixed(2)}×`);
