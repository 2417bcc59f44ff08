import { expect } from 'chai';
import { loadBridgeConfig } from '../../../services/mcp/stdio-bridge.ts';
import { ConfigError } from '../../../services/platform/config.ts';

describe('svc mcp --stdio configuration (unit)', () => {
  const key = `svc_${'a'.repeat(33)}`;

  it('reads the key and defaults to the development servers', () => {
    expect(loadBridgeConfig({ SVC_API_KEY: key })).to.deep.equal({
      apiKey: key,
      authUrl: 'http://127.0.0.1:8082',
      mcpUrl: 'http://127.0.0.1:8085/mcp',
    });
    expect(loadBridgeConfig({ SVC_API_KEY: key, AUTH_URL: 'https://auth.example', MCP_URL: 'https://mcp.example/mcp' })).to.include({
      authUrl: 'https://auth.example',
      mcpUrl: 'https://mcp.example/mcp',
    });
  });

  it('names each missing or bad variable, and never the key itself', () => {
    const problems = (env: NodeJS.ProcessEnv): string[] => {
      try {
        loadBridgeConfig(env);
      } catch (err) {
        expect(err).to.be.instanceOf(ConfigError);
        return (err as ConfigError).problems;
      }
      throw new Error('expected a ConfigError');
    };
    expect(problems({})).to.deep.equal(['SVC_API_KEY is required: the API key the tools run under (svc_ and 33 letters or digits)']);
    const bad = problems({ SVC_API_KEY: 'svc_short-and-secret', AUTH_URL: 'not a url', MCP_URL: 'ftp//x' });
    expect(bad).to.have.length(3);
    expect(bad.join('\n'))
      .to.match(/SVC_API_KEY is not an API key/)
      .and.match(/AUTH_URL must be/)
      .and.match(/MCP_URL must be/);
    expect(bad.join('\n')).to.not.include('short-and-secret');
  });
});
