import type { PageFacts } from '../../services/integration/page/page-facts.ts';

/**
 * What the probe saw of the ui-kit's AddToCartButton (found by test id, visible, enabled; a click
 * posted to /api/cart and opened the "Added to cart" dialog): the page evidence of the pure tests.
 */
export function samplePageFacts(overrides: Partial<PageFacts> = {}): PageFacts {
  return {
    url: 'http://127.0.0.1:3000/',
    finalUrl: 'http://127.0.0.1:3000/',
    title: 'Shop',
    located: {
      locator: { kind: 'test-id', attribute: 'data-testid', value: 'add-to-cart' },
      count: 1,
      tag: 'button',
      role: 'button',
      accessibleName: 'Add to cart',
      text: 'Add to cart',
      visible: true,
      enabled: true,
      href: null,
      box: { x: 0, y: 0, width: 100, height: 30 },
    },
    tried: ['a test id'],
    click: {
      clicked: true,
      navigatedTo: null,
      dialogs: [{ name: 'Added to cart' }],
      nativeDialogs: [],
      requests: [{ method: 'POST', url: 'http://127.0.0.1:3000/api/cart', path: '/api/cart', status: 200 }],
    },
    a11y: { violations: [] },
    componentPng: Buffer.from('89504e470d0a1a0a', 'hex'),
    ...overrides,
  };
}
