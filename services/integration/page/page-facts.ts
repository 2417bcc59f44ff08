import type { Severity } from '../../vision/analysis/types.ts';

/** How the component was found on the page, in a form a Playwright test can use again. */
export type LocatorSpec =
  | { kind: 'test-id'; attribute: string; value: string }
  | { kind: 'role'; role: string; name: string }
  | { kind: 'text'; text: string }
  | { kind: 'css'; selector: string };

export interface LocatedComponent {
  locator: LocatorSpec;
  /** Matches of the locator on the page (the first is the one examined). */
  count: number;
  tag: string;
  role: string | null;
  accessibleName: string | null;
  text: string;
  visible: boolean;
  enabled: boolean;
  href: string | null;
  box: { x: number; y: number; width: number; height: number } | null;
}

export interface ObservedRequest {
  method: string;
  url: string;
  /** Path and query, for matching what a sentence names (/api/cart). */
  path: string;
  status: number | null;
}

export interface ClickEffect {
  /** The click happened (the component was visible and enabled). */
  clicked: boolean;
  /** Why there was no click, when there was none. */
  reason?: string;
  /** Where the page went, when the click navigated the main frame. */
  navigatedTo: string | null;
  /** Dialogs visible after the click that were not before (role dialog/alertdialog, <dialog open>, aria-modal), by accessible name. */
  dialogs: Array<{ name: string | null }>;
  /** Native alert/confirm/prompt dialogs the click raised (dismissed). */
  nativeDialogs: Array<{ type: string; message: string }>;
  /** Requests the page made from the click until it settled (documents, fetch and XHR). */
  requests: ObservedRequest[];
}

export interface ComponentA11y {
  /** axe-core violations whose nodes are the component or inside it. */
  violations: Array<{ id: string; impact: Severity; help: string; nodes: number }>;
  /** axe could not run (the answer says so instead of claiming a clean component). */
  error?: string;
}

/** What the live page shows of the component: the page evidence of validate and of e2e generation. */
export interface PageFacts {
  url: string;
  finalUrl: string;
  title: string;
  located: LocatedComponent | null;
  /** The strategies tried, in order, as words (for "not found" answers). */
  tried: string[];
  click: ClickEffect | null;
  a11y: ComponentA11y | null;
  /** A PNG of the component as it first showed (for a visual test's baseline); null when not visible. */
  componentPng: Buffer | null;
}
