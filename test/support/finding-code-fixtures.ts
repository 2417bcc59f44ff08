import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ElementClue } from '../../services/vision/analysis/types.ts';
import { UI_KIT_DIR } from './ui-kit-site.ts';

/**
 * The projects findings are traced to code on (the e2e test and `npm run bench:finding-code`), and
 * which file renders each element: a labelled set we wrote ourselves, over fixtures we wrote
 * ourselves, so its figures say the linker works on pages like these, not on anyone's real code.
 *
 * - `shop`: the ui-kit fixture (test/fixtures/ui-kit) with one defect put in, as the integration
 *   tests put theirs: a product photo component whose <img> has no alt. The page's controls are
 *   made by src/components/*.js from shop.js; everything else is written in public/index.html.
 * - `analysis`: the analysis fixture pages (test/fixtures/vision/analysis): defects.html, every
 *   defect the analyses know, beside clean.html, which has none.
 */

export const ANALYSIS_FIXTURE_DIR = new URL('../fixtures/vision/analysis/', import.meta.url).pathname;

const PHOTO = `/**
 * The product's photo. (The defect: no alt text, so a screen reader says only "image".)
 *
 * @param {{ src: string }} props
 * @returns {HTMLImageElement}
 */
export function ProductPhoto({ src }) {
  const img = document.createElement('img');
  img.className = 'product-photo';
  img.dataset.testid = 'product-photo';
  img.width = 160;
  img.height = 80;
  img.src = src;
  return img;
}
`;

// Inline: the ui-kit site serves no image types.
const PHOTO_SRC =
  "data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg' width='160' height='80'%3E%3Crect width='160' height='80' fill='%237a4b2a'/%3E%3C/svg%3E";

/** The ui-kit fixture copied to `dir`, its shop page showing a product photo without alt. */
export function shopWithPhotoDefect(dir: string): string {
  cpSync(UI_KIT_DIR, dir, { recursive: true });
  writeFileSync(join(dir, 'src/components/product-photo.js'), PHOTO);
  const shop = join(dir, 'src/shop.js');
  const text = readFileSync(shop, 'utf8');
  const mount = '  actions.append(CouponButton({}));\n';
  if (!text.includes(mount)) throw new Error('src/shop.js no longer mounts CouponButton as expected');
  writeFileSync(
    shop,
    `import { ProductPhoto } from './components/product-photo.js';\n${text.replace(
      mount,
      `${mount}  root.querySelector('main').prepend(ProductPhoto({ src: "${PHOTO_SRC}" }));\n`,
    )}`,
  );
  return dir;
}

/** The components of the shop page, by the test id each gives its element. */
const SHOP_COMPONENTS: Record<string, string> = {
  'add-to-cart': 'src/components/add-to-cart-button.js',
  'apply-coupon': 'src/components/coupon-button.js',
  'checkout-link': 'src/components/checkout-link.js',
  'product-photo': 'src/components/product-photo.js',
};

export interface FixtureProject {
  name: string;
  /** The page analysed: a path of the ui-kit site (shop) or of the vision fixture site (analysis). */
  page: string;
  /** The file that renders an element, by what the page said of it. */
  fileOf(clue: ElementClue): string;
}

export const FIXTURE_PROJECTS: Record<'shop' | 'analysis', FixtureProject> = {
  shop: { name: 'shop', page: '/', fileOf: (clue) => SHOP_COMPONENTS[clue.testId] ?? 'public/index.html' },
  // Every element of the page is written in the page itself.
  analysis: { name: 'analysis', page: '/analysis/defects', fileOf: () => 'defects.html' },
};
