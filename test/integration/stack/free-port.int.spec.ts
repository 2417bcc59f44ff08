import { expect } from 'chai';
import { freePort, keepOut } from '../../../deploy/local/processes.ts';
import { servicePortsIn } from '../../../app/cli/start.ts';

describe('free ports for the local stack (integration: binds probe sockets)', () => {
  it('never hands out a port kept out for another process, such as a service port svc start was given', async () => {
    // 2,000 of the 15,000-32,767 range kept out: a pick that ignored them would hit one about once in nine.
    const kept = new Set(Array.from({ length: 2000 }, (_, i) => 15_000 + i * 8));
    keepOut(kept);
    const picked: number[] = [];
    for (let i = 0; i < 100; i++) picked.push(await freePort());
    expect(picked.filter((port) => kept.has(port))).to.deep.equal([]);
    expect(new Set(picked).size, 'each answer once').to.equal(picked.length);
  });

  it("reads the services' ports from the environment: every *_PORT that is a port, nothing else", () => {
    const env = {
      ACCOUNTS_PORT: '29251',
      KEYS_PORT: '8082',
      OPS_PORT: '',
      MCP_PORT: 'eight',
      ADMIN_PORT: '70000',
      PORT_LIST: '123',
      KAFKA_BROKERS: '127.0.0.1:9092',
    };
    expect(servicePortsIn(env).sort((a, b) => a - b)).to.deep.equal([8082, 29251]);
  });
});
