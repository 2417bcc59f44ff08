import { expect } from 'chai';
import { pathTerms, searchText, splitIdentifier, termsOf } from '../../../services/rag/chunking/identifiers.ts';

describe('search terms from identifiers (unit)', () => {
  it('splits camelCase, PascalCase, acronyms and digits', () => {
    expect(splitIdentifier('parseHTTPResponse2')).to.deep.equal(['parse', 'http', 'response', '2']);
    expect(splitIdentifier('UserStore')).to.deep.equal(['user', 'store']);
    expect(splitIdentifier('IOError')).to.deep.equal(['io', 'error']);
    expect(splitIdentifier('getURLs')).to.deep.equal(['get', 'urls']);
    expect(splitIdentifier('utf8Decode')).to.deep.equal(['utf', '8', 'decode']);
  });

  it('splits snake_case, SCREAMING_CASE, kebab-case and $names', () => {
    expect(splitIdentifier('load_catalogue')).to.deep.equal(['load', 'catalogue']);
    expect(splitIdentifier('MAX_RETRY_COUNT')).to.deep.equal(['max', 'retry', 'count']);
    expect(splitIdentifier('code-chunker')).to.deep.equal(['code', 'chunker']);
    expect(splitIdentifier('$scopeApply')).to.deep.equal(['scope', 'apply']);
  });

  it('keeps the whole identifier, lowercased, before its parts, and repeats for term frequency', () => {
    expect(termsOf('parseHTTPResponse2(raw)')).to.deep.equal(['parsehttpresponse2', 'parse', 'http', 'response', '2', 'raw']);
    expect(termsOf('load_catalogue')).to.deep.equal(['load_catalogue', 'load', 'catalogue']);
    expect(termsOf('max-width: 10px')).to.deep.equal(['max-width', 'max', 'width', '10px', '10', 'px']);
    expect(termsOf('x = x + 1')).to.deep.equal(['x', 'x', '1']);
  });

  it('does not take arithmetic for a kebab name, nor keep edge underscores or very long tokens', () => {
    expect(termsOf('i-1')).to.deep.equal(['i', '1']);
    expect(termsOf('__init__')).to.deep.equal(['init']);
    expect(termsOf(`${'a'.repeat(65)} ok`)).to.deep.equal(['ok']);
  });

  it('handles non-ASCII letters', () => {
    expect(termsOf('größeBerechnen')).to.deep.equal(['größeberechnen', 'größe', 'berechnen']);
  });

  it('turns a path into terms', () => {
    const terms = ['services', 'rag', 'chunking', 'code-chunker', 'code', 'chunker', 'ts'];
    expect(pathTerms('services/rag/chunking/code-chunker.ts')).to.deep.equal(terms);
  });

  it('makes one space-separated string of symbol, path and content terms', () => {
    const text = searchText({ content: 'async save(user: User)', symbol: 'UserStore.save' }, 'src/userStore.ts');
    expect(text).to.equal('userstore user store save src userstore user store ts async save user user');
    expect(text).to.match(/^[\p{Ll}\p{N}_ -]+$/u);
  });
});
