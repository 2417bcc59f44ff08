import { expect } from 'chai';
import { cpuBetween, descendantsOf, parseProcStat, parseSchedstat, roleOf, type ProcStat } from '../../../bench/process-cpu.ts';

describe('bench/process-cpu: CPU of the stack from /proc (unit)', () => {
  it('reads pid, parent, name and user + system CPU from a stat line, a name with spaces and parentheses included', () => {
    const line = '4242 (ferretdb (v1)) S 4200 4242 4200 0 -1 4194560 900 0 0 0 250 75 0 0 20 0 12 0 5000 1000000 3000';
    expect(parseProcStat(line)).to.deep.equal({ pid: 4242, ppid: 4200, comm: 'ferretdb (v1)', cpuMs: 3250 });
    expect(parseProcStat('not a stat line')).to.equal(undefined);
    expect(parseProcStat('12 (x) S')).to.equal(undefined);
  });

  it('walks the tree below the root only, through shells that supervise', () => {
    const p = (pid: number, ppid: number, comm = 'x'): ProcStat => ({ pid, ppid, comm, cpuMs: 1 });
    const all = [
      p(1, 0),
      p(10, 1, 'node'),
      p(11, 10, 'bash'),
      p(12, 11, 'java'),
      p(13, 10, 'bash'),
      p(14, 13, 'postgres'),
      p(15, 14, 'postgres'),
      p(20, 1, 'stranger'),
    ];
    expect(
      descendantsOf(10, all)
        .map((x) => x.pid)
        .sort((a, b) => a - b),
    ).to.deep.equal([10, 11, 12, 13, 14, 15]);
    expect(descendantsOf(99, all)).to.deep.equal([]);
  });

  it('names each process by what it runs; the root is the services', () => {
    expect(roleOf('java', 'java -Xmx512m kafka.Kafka /tmp/server.properties', false)).to.equal('Kafka');
    expect(roleOf('java', 'java -jar /c/apicurio-registry/schema-registry-1-runner.jar', false)).to.equal('schema registry');
    expect(roleOf('postgres', '', false)).to.equal('PostgreSQL');
    expect(roleOf('ferretdb-v1.24', '', false)).to.equal('FerretDB');
    expect(roleOf('mailpit-v1.21', '', false)).to.equal('Mailpit');
    expect(roleOf('bash', '', false)).to.equal('other');
    expect(roleOf('node', '', true)).to.match(/^this process/);
  });

  it('takes what each role used between two samples, never below zero', () => {
    const used = cpuBetween(
      new Map([
        ['Kafka', 100],
        ['PostgreSQL', 50],
      ]),
      new Map([
        ['Kafka', 160],
        ['PostgreSQL', 40], // a backend ended meanwhile
        ['Mailpit', 5],
      ]),
    );
    expect(Object.fromEntries(used)).to.deep.equal({ Kafka: 60, PostgreSQL: 0, Mailpit: 5 });
  });

  it("reads a thread's CPU time and its wait for a CPU (run_delay) from a schedstat line, in ms", () => {
    expect(parseSchedstat('2786000000 86500000 41235\n')).to.deep.equal({ cpuMs: 2786, waitMs: 86.5 });
    expect(parseSchedstat('0 0 1')).to.deep.equal({ cpuMs: 0, waitMs: 0 });
    expect(parseSchedstat('')).to.equal(undefined);
    expect(parseSchedstat('12')).to.equal(undefined);
    expect(parseSchedstat('x y z')).to.equal(undefined);
  });
});
