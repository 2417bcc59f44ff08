/**
 * The script `inspectPage` runs in the page: one pass over the DOM that gathers every fact the
 * analyses need. A string because this project type-checks without the DOM library; it runs in the
 * page's own world, so whatever it returns is the page's word and is validated on the way out
 * (report-schema.ts). The caps here keep the work bounded; the schema enforces them again.
 */

export const CAPS = {
  /** Elements visited by the layout and text scans (document order, from <body>). */
  scanned: 6000,
  interactive: 300,
  images: 100,
  textIssues: 50,
  wideElements: 30,
  offScreen: 30,
  siblingGroups: 60,
  groupChildren: 24,
  probes: 50,
  /** Images whose failure is confirmed with img.decode() (each waits at most DECODE_WAIT_MS). */
  decodeChecks: 50,
  axeViolations: 50,
  axeNodes: 20,
} as const;

const DECODE_WAIT_MS = 1000;

const INTERACTIVE =
  'a[href],area[href],button,input:not([type=hidden]),select,textarea,summary,' +
  '[role=button],[role=link],[role=checkbox],[role=radio],[role=tab],[role=menuitem],[role=switch],[role=combobox],[role=textbox]';

const FOCUSABLE = 'a[href],button,input:not([type=hidden]),select,textarea,summary,[tabindex]';

export function pageScript(probes: readonly string[]): string {
  return `(async () => {
  const CAPS = ${JSON.stringify(CAPS)};
  const probeSelectors = ${JSON.stringify(probes)};
  const errors = [];
  const truncated = {};
  const sx = window.scrollX || 0, sy = window.scrollY || 0;
  const vw = window.innerWidth, vh = window.innerHeight;
  const root = document.documentElement;
  const docW = Math.max(root ? root.scrollWidth : 0, vw), docH = Math.max(root ? root.scrollHeight : 0, vh);
  const round = (v) => Math.round(v * 100) / 100;
  const clean = (s) => String(s == null ? '' : s).replace(/\\s+/g, ' ').trim();
  const docBox = (r) => ({ x: round(r.left + sx), y: round(r.top + sy), width: round(r.width), height: round(r.height) });
  const boxOf = (el) => docBox(el.getBoundingClientRect());
  const styles = new Map();
  const styleOf = (el) => { let s = styles.get(el); if (!s) { s = getComputedStyle(el); styles.set(el, s); } return s; };
  const capped = (name, list, cap, item) => { if (list.length < cap) { list.push(item); return true; } truncated[name] = (truncated[name] || cap) + 1; return false; };

  const selectors = new Map();
  const unique = (sel) => { try { return document.querySelectorAll(sel).length === 1; } catch { return false; } };
  function selectorOf(el) {
    if (selectors.has(el)) return selectors.get(el);
    let result;
    if (el.id && unique('#' + CSS.escape(el.id))) result = '#' + CSS.escape(el.id);
    const testId = el.getAttribute('data-testid');
    if (!result && testId) { const s = '[data-testid="' + testId.replace(/["\\\\]/g, '\\\\$&') + '"]'; if (unique(s)) result = s; }
    if (!result) {
      const parts = [];
      for (let node = el; node && node.nodeType === 1 && node !== root; node = node.parentElement) {
        if (node !== el && node.id && unique('#' + CSS.escape(node.id))) { parts.unshift('#' + CSS.escape(node.id)); break; }
        const tag = node.localName;
        let nth = 1, more = false;
        for (let s = node.previousElementSibling; s; s = s.previousElementSibling) if (s.localName === tag) nth++;
        for (let s = node.nextElementSibling; s; s = s.nextElementSibling) if (s.localName === tag) { more = true; break; }
        parts.unshift(nth > 1 || more ? tag + ':nth-of-type(' + nth + ')' : tag);
      }
      result = parts.join(' > ') || el.localName;
    }
    selectors.set(el, result);
    return result;
  }

  function rendered(el) {
    const r = el.getBoundingClientRect();
    if (r.width < 1 || r.height < 1) return false;
    if (typeof el.checkVisibility === 'function') return el.checkVisibility({ opacityProperty: true, visibilityProperty: true });
    const s = styleOf(el);
    return s.display !== 'none' && s.visibility !== 'hidden';
  }

  // The visually-hidden idiom (sr-only): clipped to nothing or to a pixel, on the element or near it.
  function visuallyHidden(el) {
    let n = el;
    for (let i = 0; n && n.nodeType === 1 && i < 8; n = n.parentElement, i++) {
      const s = styleOf(n);
      if (/^rect\\(\\s*0(px)?[ ,]+0(px)?[ ,]+0(px)?[ ,]+0(px)?\\s*\\)$/.test(s.clip) || /^inset\\(\\s*50%/.test(s.clipPath)) return true;
      const r = n.getBoundingClientRect();
      if (r.width <= 2 && r.height <= 2 && (s.overflow !== 'visible' || s.clip !== 'auto' || s.clipPath !== 'none')) return true;
    }
    return false;
  }

  function textOf(node, depth) {
    if (depth > 25) return '';
    if (node.nodeType === 3) return node.data;
    if (node.nodeType !== 1) return '';
    const el = node, tag = el.localName;
    if (el.getAttribute('aria-hidden') === 'true' || tag === 'script' || tag === 'style' || tag === 'template' || tag === 'noscript') return '';
    const s = styleOf(el);
    if (s.display === 'none' || s.visibility === 'hidden') return '';
    const label = clean(el.getAttribute('aria-label'));
    if (label) return ' ' + label + ' ';
    if (tag === 'img' || (tag === 'input' && el.type === 'image')) return ' ' + clean(el.getAttribute('alt')) + ' ';
    if (tag === 'svg') { const t = el.querySelector('title'); return t ? ' ' + clean(t.textContent) + ' ' : ''; }
    let out = '';
    for (const child of el.childNodes) { out += textOf(child, depth + 1); if (out.length > 1000) break; }
    return s.display === 'inline' ? out : ' ' + out + ' ';
  }

  // A simplified accessible-name computation (accname 1.2 order for the common cases).
  function nameOf(el) {
    const labelledBy = el.getAttribute('aria-labelledby');
    if (labelledBy) {
      const text = clean(labelledBy.split(/\\s+/).map((id) => { const r = document.getElementById(id); return r ? textOf(r, 0) : ''; }).join(' '));
      if (text) return [text, 'aria-labelledby'];
    }
    const aria = clean(el.getAttribute('aria-label'));
    if (aria) return [aria, 'aria-label'];
    const tag = el.localName, type = (el.getAttribute('type') || '').toLowerCase();
    const buttonInput = tag === 'input' && (type === 'submit' || type === 'reset' || type === 'button' || type === 'image');
    const field = (tag === 'input' && !buttonInput) || tag === 'select' || tag === 'textarea';
    if (field && el.labels) {
      const text = clean(Array.from(el.labels).map((l) => textOf(l, 0)).join(' '));
      if (text) return [text, 'label'];
    }
    if (tag === 'input' && type === 'image') { const alt = clean(el.getAttribute('alt')); if (alt) return [alt, 'alt']; }
    if (buttonInput && type !== 'image') {
      const value = clean(el.value) || (type === 'submit' ? 'Submit' : type === 'reset' ? 'Reset' : '');
      if (value) return [value, 'value'];
    }
    if (!field) { const text = clean(textOf(el, 0)); if (text) return [text, 'content']; }
    const title = clean(el.getAttribute('title'));
    if (title) return [title, 'title'];
    if (field) { const p = clean(el.getAttribute('placeholder')); if (p) return [p, 'placeholder']; }
    return ['', 'none'];
  }

  const INPUT_ROLES = { checkbox: 'checkbox', radio: 'radio', range: 'slider', number: 'spinbutton', search: 'searchbox',
    submit: 'button', reset: 'button', button: 'button', image: 'button', file: 'button', color: 'button' };
  function roleOf(el) {
    const explicit = clean(el.getAttribute('role')).split(' ')[0];
    if (explicit) return [explicit, 'explicit'];
    const tag = el.localName;
    if (tag === 'a' || tag === 'area') return [el.hasAttribute('href') ? 'link' : 'generic', 'implicit'];
    if (tag === 'button' || tag === 'summary') return ['button', 'implicit'];
    if (tag === 'select') return [el.multiple || el.size > 1 ? 'listbox' : 'combobox', 'implicit'];
    if (tag === 'textarea') return ['textbox', 'implicit'];
    if (tag === 'input') return [INPUT_ROLES[(el.getAttribute('type') || 'text').toLowerCase()] || 'textbox', 'implicit'];
    return ['generic', 'implicit'];
  }

  // WCAG 2.5.8's inline exception: a link laid out in a line of other text.
  function inSentence(el) {
    if (styleOf(el).display !== 'inline') return false;
    let block = el.parentElement;
    while (block && styleOf(block).display === 'inline') block = block.parentElement;
    if (!block) return false;
    let other = 0;
    const walker = document.createTreeWalker(block, 4);
    for (let n = walker.nextNode(), i = 0; n && i < 500; n = walker.nextNode(), i++) {
      const owner = n.parentElement;
      if (owner && !owner.closest('a,button,[role=link],[role=button]')) other += clean(n.data).length;
    }
    return other >= 10;
  }

  function collectInteractive() {
    const out = [];
    const index = new Map();
    for (const el of document.querySelectorAll(INTERACTIVE_SELECTOR)) {
      const tabindex = el.getAttribute('tabindex');
      if (!el.matches(${JSON.stringify(INTERACTIVE)}) && !el.hasAttribute('onclick') && !(tabindex !== null && Number(tabindex) >= 0)) continue;
      if (out.length >= CAPS.interactive) { truncated.interactive = (truncated.interactive || CAPS.interactive) + 1; continue; }
      const [role, roleSource] = roleOf(el);
      const [name, nameSource] = nameOf(el);
      const item = { index: out.length, selector: selectorOf(el), tag: el.localName, role, roleSource, name: name.slice(0, 200), nameSource,
        box: boxOf(el), visible: rendered(el) && !visuallyHidden(el), disabled: el.matches(':disabled') || el.getAttribute('aria-disabled') === 'true',
        within: [], inline: inSentence(el),
        userAgentSized: el.localName === 'input' && (el.type === 'checkbox' || el.type === 'radio') && styleOf(el).appearance !== 'none' };
      const rects = el.getClientRects();
      if (rects.length > 1) item.rects = Array.from(rects).slice(0, 4).map(docBox);
      out.push(item);
      index.set(el, item.index);
    }
    for (const [el, i] of index) {
      for (let p = el.parentElement; p; p = p.parentElement) if (index.has(p)) out[i].within.push(index.get(p));
    }
    return out;
  }

  async function collectImages() {
    const out = [];
    const all = Array.from(document.images);
    if (all.length > CAPS.images) truncated.images = all.length;
    for (const img of all.slice(0, CAPS.images)) {
      out.push({ selector: selectorOf(img), tag: 'img', src: String(img.currentSrc || img.getAttribute('src') || '').slice(0, 300),
        alt: img.getAttribute('alt'), complete: img.complete, naturalWidth: img.naturalWidth, naturalHeight: img.naturalHeight,
        box: boxOf(img), visible: rendered(img), decodeFailed: false, el: img });
    }
    const wait = (ms) => new Promise((resolve) => setTimeout(() => resolve(false), ms));
    const suspects = out.filter((i) => i.complete && i.naturalWidth === 0 && i.src !== '').slice(0, CAPS.decodeChecks);
    await Promise.all(suspects.map(async (i) => {
      // An SVG without intrinsic size also has naturalWidth 0; decode() tells it from a broken image.
      i.decodeFailed = await Promise.race([i.el.decode().then(() => false, () => true), wait(${DECODE_WAIT_MS})]);
    }));
    for (const i of out) delete i.el;
    return out;
  }

  function textRectOf(el) {
    let left = Infinity, top = Infinity, right = -Infinity, bottom = -Infinity, text = '';
    const range = document.createRange();
    for (const child of el.childNodes) {
      if (child.nodeType !== 3 || !child.data.trim()) continue;
      text += child.data;
      range.selectNodeContents(child);
      const r = range.getBoundingClientRect();
      if (r.width === 0 && r.height === 0) continue;
      left = Math.min(left, r.left); top = Math.min(top, r.top); right = Math.max(right, r.right); bottom = Math.max(bottom, r.bottom);
    }
    return left === Infinity ? null : { left, top, right, bottom, text: clean(text) };
  }

  const SKIP_TEXT = new Set(['script', 'style', 'noscript', 'template', 'option', 'optgroup', 'select', 'textarea', 'input', 'title', 'svg']);
  // Where the text's own lines go past the first block box above it that does not contain them:
  // cut off when that box clips, spilling over it when it does not. Scroll boxes are fine.
  function textIssueOf(el) {
    if (SKIP_TEXT.has(el.localName) || el.closest('svg')) return null;
    const tr = textRectOf(el);
    if (!tr) return null;
    if (!rendered(el) || visuallyHidden(el)) return null;
    // Glyphs may stand out of a tight line box (line-height: 1): vertically only half a line counts.
    const slackY = Math.max(2, parseFloat(styleOf(el).fontSize || '16') * 0.5);
    let n = el;
    for (let depth = 0; n && n !== root && n !== document.body && depth < 10; n = n.parentElement, depth++) {
      const s = styleOf(n);
      if (s.display === 'inline' || s.display === 'contents') continue;
      const r = n.getBoundingClientRect();
      const cl = r.left + n.clientLeft, ct = r.top + n.clientTop;
      const clientW = n.clientWidth || r.width, clientH = n.clientHeight || r.height;
      let overX = Math.max(cl - tr.left, tr.right - (cl + clientW), 0);
      let overY = Math.max(ct - tr.top, tr.bottom - (ct + clientH), 0);
      const clipsX = s.overflowX === 'hidden' || s.overflowX === 'clip', clipsY = s.overflowY === 'hidden' || s.overflowY === 'clip';
      if (n === el && clipsX && n.scrollWidth > n.clientWidth + 1) overX = Math.max(overX, n.scrollWidth - n.clientWidth);
      if (n === el && clipsY && n.scrollHeight > n.clientHeight + slackY) overY = Math.max(overY, n.scrollHeight - n.clientHeight);
      const x = overX > 1, y = overY > slackY;
      // An absolutely placed box is out of its ancestors' flow by design: they do not contain it.
      if (!x && !y) { if (s.position === 'absolute' || s.position === 'fixed') return null; continue; }
      const scrollsX = s.overflowX === 'auto' || s.overflowX === 'scroll', scrollsY = s.overflowY === 'auto' || s.overflowY === 'scroll';
      if ((x && scrollsX) || (y && scrollsY)) return null;
      const kind = (x && clipsX) || (y && clipsY) ? 'clipped' : 'overflow';
      return { kind, selector: selectorOf(el), tag: el.localName, box: boxOf(el), text: tr.text.slice(0, 120),
        containerSelector: selectorOf(n), containerBox: boxOf(n), overflowPx: round(Math.max(x ? overX : 0, y ? overY : 0)), axis: x && y ? 'both' : x ? 'x' : 'y' };
    }
    return null;
  }

  const hasContent = (el) => clean(el.textContent).length > 0 || el.querySelector('img,svg,video,canvas,input,button,select,textarea') !== null || /^(img|svg|video|canvas|input|button|select|textarea)$/.test(el.localName);
  const insideAny = (el, list) => list.some((other) => other.contains(el));

  // Inside a clip or scroll box (a carousel, a scroller): that box decides what shows, not the document.
  function clippedByAncestor(el, axis) {
    for (let p = el.parentElement; p && p !== document.body && p !== root; p = p.parentElement) {
      const s = styleOf(p);
      if (s.overflowX !== 'visible' || (axis === 'both' && s.overflowY !== 'visible')) return true;
    }
    return false;
  }

  function revealsOnFocus(el) {
    const target = el.matches(${JSON.stringify(FOCUSABLE)}) ? el : el.querySelector(${JSON.stringify(FOCUSABLE)});
    if (!target || typeof target.focus !== 'function') return false;
    const before = document.activeElement;
    target.focus({ preventScroll: true });
    const r = el.getBoundingClientRect();
    const shown = r.right > 0 && r.bottom > 0 && r.left < vw && r.top < vh;
    target.blur();
    if (before && before !== document.body && typeof before.focus === 'function') before.focus({ preventScroll: true });
    return shown;
  }

  function siblingGroupOf(parent) {
    const kids = [];
    for (const c of parent.children) {
      const s = styleOf(c);
      if (s.display === 'none' || s.display === 'inline' || s.display === 'contents' || s.position === 'absolute' || s.position === 'fixed') continue;
      const r = c.getBoundingClientRect();
      if (r.width < 1 || r.height < 1) continue;
      kids.push([c, r]);
      if (kids.length >= CAPS.groupChildren) break;
    }
    if (kids.length < 3) return null;
    let column = true, row = true;
    for (let i = 1; i < kids.length; i++) {
      const a = kids[i - 1][1], b = kids[i][1];
      if (!(b.top >= a.bottom - 1 && b.left < a.right && a.left < b.right)) column = false;
      if (!(b.left >= a.right - 1 && b.top < a.bottom && a.top < b.bottom)) row = false;
    }
    if (!column && !row) return null;
    const s = styleOf(parent);
    return { parentSelector: selectorOf(parent), direction: column ? 'column' : 'row',
      alignItems: /flex|grid/.test(s.display) ? s.alignItems : 'normal', textDirection: s.direction === 'rtl' ? 'rtl' : 'ltr',
      children: kids.map(([c, r]) => ({ selector: selectorOf(c), tag: c.localName, box: docBox(r) })) };
  }

  function scanLayout() {
    const textIssues = [], wide = [], wideEls = [], offScreen = [], offEls = [], groups = [];
    const body = document.body;
    if (!body) return { textIssues, wideElements: wide, offScreen, siblingGroups: groups };
    const all = [body, ...Array.from(body.getElementsByTagName('*')).slice(0, CAPS.scanned)];
    if (body.getElementsByTagName('*').length > CAPS.scanned) truncated.scanned = body.getElementsByTagName('*').length;
    for (const el of all) {
      if (el.namespaceURI !== 'http://www.w3.org/1999/xhtml') continue;
      const issue = textIssueOf(el);
      if (issue) capped('textIssues', textIssues, CAPS.textIssues, issue);
      const group = siblingGroupOf(el);
      if (group) capped('siblingGroups', groups, CAPS.siblingGroups, group);
      if (el === body || !rendered(el) || insideAny(el, wideEls) || insideAny(el, offEls)) continue;
      const b = boxOf(el);
      const outside = b.x + b.width <= 0 || b.y + b.height <= 0 || b.x >= docW || b.y >= docH;
      if (outside) {
        if (!visuallyHidden(el) && hasContent(el) && !clippedByAncestor(el, 'both') && capped('offScreen', offScreen, CAPS.offScreen,
          { selector: selectorOf(el), tag: el.localName, box: b, revealsOnFocus: revealsOnFocus(el), text: clean(el.textContent).slice(0, 120) })) offEls.push(el);
        continue;
      }
      if (b.x + b.width > vw + 1 && !clippedByAncestor(el, 'x') && !visuallyHidden(el)) {
        if (capped('wideElements', wide, CAPS.wideElements, { selector: selectorOf(el), tag: el.localName, box: b })) wideEls.push(el);
      }
    }
    return { textIssues, wideElements: wide, offScreen, siblingGroups: groups };
  }

  function runProbes() {
    return probeSelectors.slice(0, CAPS.probes).map((selector) => {
      let matches;
      try { matches = document.querySelectorAll(selector); } catch (e) { return { selector, exists: false, count: 0, visible: false, text: '', error: String(e && e.message || e).slice(0, 200) }; }
      const first = matches[0];
      if (!first) return { selector, exists: false, count: 0, visible: false, text: '' };
      return { selector, exists: true, count: matches.length, visible: rendered(first) && !visuallyHidden(first),
        text: clean(first.innerText !== undefined ? first.innerText : first.textContent).slice(0, 300), box: boxOf(first) };
    });
  }

  const INTERACTIVE_SELECTOR = ${JSON.stringify(`${INTERACTIVE},[tabindex],[onclick]`)};
  const attempt = (what, fn, fallback) => { try { return fn(); } catch (e) { errors.push(what + ': ' + String(e && e.message || e).slice(0, 200)); return fallback; } };
  const interactive = attempt('interactive', collectInteractive, []);
  let images = [];
  try { images = await collectImages(); } catch (e) { errors.push('images: ' + String(e && e.message || e).slice(0, 200)); }
  const layout = attempt('layout', scanLayout, { textIssues: [], wideElements: [], offScreen: [], siblingGroups: [] });
  const probes = attempt('probes', runProbes, []);
  return { version: 1, url: String(location.href).slice(0, 2000), viewport: { width: vw, height: vh }, document: { width: docW, height: docH },
    interactive, images, ...layout, probes, truncated, errors };
})()`;
}
