import { expect } from 'chai';
import {
  MAX_NESTING,
  deeperThan,
  initializeWithoutVersion,
  isJsonRpcShaped,
  originForm,
  unservedMethod,
} from '../../../services/mcp/http/mcp.routes.ts';

const nested = (depth: number): unknown => JSON.parse(`${'{"a":'.repeat(depth - 1)}{}${'}'.repeat(depth - 1)}`);

describe('MCP messages nested too deeply (found by npm run fuzz)', () => {
  it('counts objects and arrays, at any depth, without recursion', () => {
    expect(deeperThan(nested(MAX_NESTING), MAX_NESTING)).to.equal(false);
    expect(deeperThan(nested(MAX_NESTING + 1), MAX_NESTING)).to.equal(true);
    expect(deeperThan(JSON.parse(`${'['.repeat(200_000)}${']'.repeat(200_000)}`), MAX_NESTING)).to.equal(true);
    expect(
      deeperThan(
        {
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name: 'rag_query', arguments: { query: 'x', files: [{ path: 'a', content: 'b' }] } },
        },
        MAX_NESTING,
      ),
    ).to.equal(false);
    expect(deeperThan('text', 0)).to.equal(false);
  });
});

describe('MCP bodies that are not JSON-RPC 2.0 (found by npm run fuzz: the SDK answered them 500)', () => {
  it('takes an object with jsonrpc "2.0", or a non-empty batch of them with distinct ids', () => {
    expect(isJsonRpcShaped({ jsonrpc: '2.0', id: 1, method: 'ping' })).to.equal(true);
    expect(
      isJsonRpcShaped([
        { jsonrpc: '2.0', id: 1, method: 'ping' },
        { jsonrpc: '2.0', id: 2, method: 'ping' },
        { jsonrpc: '2.0', method: 'notifications/initialized' },
      ]),
    ).to.equal(true);
    expect(isJsonRpcShaped(1.8885783587635846e24)).to.equal(false);
    expect(isJsonRpcShaped(null)).to.equal(false);
    expect(isJsonRpcShaped('ping')).to.equal(false);
    expect(isJsonRpcShaped({ jsonrpc: '1.0', id: 1, method: 'ping' })).to.equal(false);
    expect(isJsonRpcShaped({ jsonrpc: { $gt: '' }, id: 1, method: 'ping' })).to.equal(false);
    expect(isJsonRpcShaped([])).to.equal(false);
    expect(
      isJsonRpcShaped([
        { jsonrpc: '2.0', id: 'caller', method: 'tools/list' },
        { jsonrpc: '2.0', id: 'caller', method: 'tools/list' },
      ]),
    ).to.equal(false);
  });

  it('takes ids that are strings, numbers or null, and nothing else', () => {
    for (const id of ['a', 0, -1.5, null, undefined])
      expect(isJsonRpcShaped({ jsonrpc: '2.0', id, method: 'ping' }), String(id)).to.equal(true);
    for (const id of [{ a: 1 }, [1], true, ''])
      expect(isJsonRpcShaped({ jsonrpc: '2.0', id, method: 'ping' }), JSON.stringify(id)).to.equal(id === '');
    expect(isJsonRpcShaped([{ jsonrpc: '2.0', id: { a: { a: {} } }, method: 'ping' }])).to.equal(false);
  });
});

describe('request targets handed to the MCP adapter (found by npm run fuzz)', () => {
  it('keeps the path and query of an origin-form or absolute-form target', () => {
    expect(originForm('/mcp?x=1')).to.equal('/mcp?x=1');
    expect(originForm('http://127.0.0.1/mcp')).to.equal('/mcp');
    expect(originForm('https://example.com:8443/mcp?a=b')).to.equal('/mcp?a=b');
    expect(originForm('*')).to.equal('/mcp');
  });
});

describe('MCP methods the SDK answered with 500 (found by npm run fuzz)', () => {
  it('names the methods of capabilities this server lacks', () => {
    expect(unservedMethod({ jsonrpc: '2.0', id: 1, method: 'prompts/list' })).to.equal('prompts/list');
    expect(
      unservedMethod([
        { jsonrpc: '2.0', id: 1, method: 'ping' },
        { jsonrpc: '2.0', id: 2, method: 'resources/read' },
      ]),
    ).to.equal('resources/read');
    expect(unservedMethod({ jsonrpc: '2.0', id: 1, method: 'completion/complete' })).to.equal('completion/complete');
    expect(unservedMethod({ jsonrpc: '2.0', id: 1, method: 'tools/list' })).to.equal(null);
    expect(unservedMethod({ jsonrpc: '2.0', id: 1, method: 'x/y' })).to.equal(null);
  });

  it('finds an initialize without protocolVersion, capabilities or clientInfo', () => {
    expect(initializeWithoutVersion({ jsonrpc: '2.0', id: 7, method: 'initialize', params: {} })).to.equal(7);
    expect(initializeWithoutVersion({ jsonrpc: '2.0', id: 'a', method: 'initialize' })).to.equal('a');
    expect(
      initializeWithoutVersion({
        jsonrpc: '2.0',
        id: 7,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'c', version: '1' } },
      }),
    ).to.equal(null);
    expect(initializeWithoutVersion({ jsonrpc: '2.0', id: 7, method: 'tools/list', params: {} })).to.equal(null);
  });
});
