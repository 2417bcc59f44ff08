import { expect } from 'chai';
import { chunkFile } from '../../../services/rag/chunking/chunker.ts';
import { expectEveryLineCovered, fixture, only, summary } from './helpers.ts';

async function chunksOf(name: string, path: string, maxChars = 3000) {
  const source = fixture(name);
  const chunks = await chunkFile(path, source, { maxChars });
  expectEveryLineCovered(source, chunks, maxChars);
  return chunks;
}

describe('code chunker: Rust, Java, C#, C++, Ruby, PHP, Bash (unit)', () => {
  it('Rust: structs, traits, impl blocks named after their type, doc comments and attributes kept', async () => {
    const chunks = await chunksOf('lib.rs', 'src/geometry/lib.rs', 150);
    expect(summary(chunks)).to.deep.equal([
      'module - 1-1',
      'type Point 3-8',
      'interface Shape 10-13',
      'class Point 15-20',
      'method Point.fmt 16-19',
      'function distance 22-24',
    ]);
    expect(chunks[1]?.content.split('\n').slice(0, 3)).to.deep.equal([
      '/// A point on the plane.',
      '#[derive(Debug, Clone)]',
      'pub struct Point {',
    ]);
    expect(only(chunks, 'Point.fmt').content).to.match(/^ {4}\/\/\/ Writes `\(x, y\)`\.\n {4}fn fmt/);
    expect(chunks.every((c) => c.language === 'rust')).to.equal(true);
  });

  it('Java: class outline with Javadoc and annotations, methods as Class.method', async () => {
    const chunks = await chunksOf('Accounts.java', 'src/main/java/com/example/Accounts.java', 300);
    expect(summary(chunks)).to.deep.equal([
      'module - 1-4',
      'class Accounts 6-21',
      'method Accounts.credit 12-16',
      'method Accounts.balance 18-20',
    ]);
    expect(only(chunks, 'Accounts').content).to.include('    public void credit(String id, long amount)');
    expect(only(chunks, 'Accounts.credit').content.split('\n').slice(0, 2)).to.deep.equal([
      '    /** Credits an account. */',
      '    @Deprecated',
    ]);
  });

  it('C#: namespaces are see-through, XML doc comments kept', async () => {
    const chunks = await chunksOf('Billing.cs', 'Billing/InvoiceService.cs', 300);
    expect(summary(chunks)).to.deep.equal([
      'module - 1-4',
      'class InvoiceService 5-17',
      'method InvoiceService.InvoiceService 10-10',
      'method InvoiceService.Total 12-16',
      'enum Currency 19-20',
    ]);
    expect(only(chunks, 'InvoiceService.Total').content).to.match(/^ {8}\/\/\/ <summary>Total with tax.<\/summary>/);
    expect(chunks[0]?.language).to.equal('csharp');
  });

  it('C++: include guards and namespaces are see-through; a prototype joins its definition', async () => {
    const chunks = await chunksOf('queue.hpp', 'include/util/queue.hpp');
    expect(summary(chunks)).to.deep.equal(['module - 1-6', 'class Queue 8-17', 'function max_of 19-28']);
    const head = ['/// A first-in first-out queue.', 'template <typename T>', 'class Queue {'];
    expect(only(chunks, 'Queue').content.split('\n').slice(0, 3)).to.deep.equal(head);
  });

  it('Ruby: modules and classes qualify their members; comments are kept', async () => {
    const chunks = await chunksOf('greeter.rb', 'lib/greetings/greeter.rb', 200);
    expect(summary(chunks)).to.include.members([
      'class Greetings.Greeter 5-18',
      'method Greetings.Greeter.initialize 6-8',
      'method Greetings.Greeter.greet 10-13',
      'method Greetings.Greeter.default 15-17',
    ]);
    expect(only(chunks, 'Greetings.Greeter.greet').content).to.match(/^ {4}# The greeting for a language code\.\n {4}def greet/);
  });

  it('PHP: classes, methods and functions', async () => {
    const chunks = await chunksOf('Cart.php', 'src/Cart.php', 120);
    expect(summary(chunks)).to.deep.equal(['module - 1-2', 'class Cart 4-14', 'method Cart.add 9-13', 'function cart_total 16-19']);
  });

  it('Bash: functions with their comments; an extension-less script is recognised by its shebang', async () => {
    const chunks = await chunksOf('deploy', 'bin/deploy');
    expect(summary(chunks)).to.deep.equal(['module - 1-2', 'function log 4-7', 'function deploy_app 9-11', 'module - 13-13']);
    expect(chunks[0]?.language).to.equal('bash');
  });
});
